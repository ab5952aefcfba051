import { formatLsn } from '../../src/sql/lsn';
import { READ_AFTER_COOKIE, readAfterCookieOf } from '../../src/sql/read-your-writes';

/** Positions as the assertions show them (Jest's workers cannot report a bigint). */
const read = (cookies: string | undefined) => {
  const position = readAfterCookieOf(cookies);
  return position === undefined ? undefined : formatLsn(position);
};

describe('the read-after cookie a browser sends back', () => {
  it('reads the position among the other cookies of the site, spaces or none', () => {
    expect(read(`${READ_AFTER_COOKIE}=0/3000148`)).toBe('0/3000148');
    expect(read(`theme=dark; ${READ_AFTER_COOKIE}=16/B374D848; session=x`)).toBe('16/B374D848');
    expect(read(`theme=dark;${READ_AFTER_COOKIE}=1/0`)).toBe('1/0');
  });

  it('ignores a cookie that names no position, another name, and no cookies at all', () => {
    expect(read(`${READ_AFTER_COOKIE}=yesterday`)).toBeUndefined();
    expect(read(`x${READ_AFTER_COOKIE}=0/3000148`)).toBeUndefined();
    expect(read('theme=dark')).toBeUndefined();
    expect(read(undefined)).toBeUndefined();
  });
});
