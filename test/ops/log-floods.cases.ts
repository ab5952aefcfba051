import { FLOOD_INTERVAL_MS, FloodLog } from '../../src/logger';
import { captureLog } from '../helpers/log-capture';

/** docs/operating.md, "Logs": floods of one refusal are one line and a count per interval, not a line each. */
describe('FloodLog', () => {
  it('writes the first line of each key, then one line counting the rest of the interval', () => {
    const log = captureLog();
    const floods = new FloodLog(log.logger);
    for (let i = 0; i < 1_000; i++) floods.warn('anon:127.0.0.2 slots', { identity: 'anon:127.0.0.2' }, 'request refused');
    floods.warn('anon:127.0.0.3 slots', { identity: 'anon:127.0.0.3' }, 'request refused');
    expect(log.messages('warn')).toEqual(['request refused', 'request refused']);
    floods.flush();
    // A key that came once has nothing to sum up.
    expect(log.messages('warn')).toEqual(['request refused', 'request refused', `request refused: 999 more like this in the last ${FLOOD_INTERVAL_MS / 1000} s`]);
    expect(log.lines.at(-1)).toMatchObject({ identity: 'anon:127.0.0.2', more: 999 });
    // The next interval starts afresh.
    floods.warn('anon:127.0.0.2 slots', { identity: 'anon:127.0.0.2' }, 'request refused');
    expect(log.messages('warn')).toHaveLength(4);
    floods.flush();
  });

  it('sums up its interval by itself when the interval ends', async () => {
    const log = captureLog();
    const floods = new FloodLog(log.logger, 20);
    floods.warn('k', {}, 'refused');
    floods.warn('k', {}, 'refused');
    const summed = new Promise<void>((resolve) => {
      const write = log.logger.warn.bind(log.logger);
      jest.spyOn(log.logger, 'warn').mockImplementation((...args: Parameters<typeof write>) => {
        write(...args);
        resolve();
      });
    });
    await summed;
    expect(log.messages('warn')).toEqual(['refused', 'refused: 1 more like this in the last 0.02 s']);
  });
});
