import { TimeoutError, withTimeout } from '../../src/common/timeout';

describe('withTimeout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the promise when it settles in time, and leaves no timer behind', async () => {
    await expect(withTimeout(Promise.resolve(7), 100)).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 100)).rejects.toThrow('refused');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with a TimeoutError carrying the message once the time is up', async () => {
    const never = new Promise<number>(() => undefined);
    const raced = withTimeout(never, 250, 'expected Redis to answer within 250 ms, got no answer');
    const settled = expect(raced).rejects.toThrow(new TimeoutError('expected Redis to answer within 250 ms, got no answer'));
    jest.advanceTimersByTime(249);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(1);
    await settled;
    expect(jest.getTimerCount()).toBe(0);
  });

  it('says how long it waited when given no message', async () => {
    const raced = withTimeout(new Promise(() => undefined), 10).catch((error: unknown) => error);
    jest.advanceTimersByTime(10);
    const error = await raced;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe('expected an answer within 10 ms, got none');
  });
});
