import request from 'supertest';

export const BURST_QUERY = { query: '{ pets(first: 1) { totalCount } }' };

/** Sends `count` requests at once with one key, spread over the given instances; returns the statuses. */
export async function burst(urls: string[], key: string, count: number): Promise<number[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) => request(urls[i % urls.length]).post('/graphql').set('X-API-Key', key).send(BURST_QUERY)),
  );
  return responses.map((response) => response.status);
}

/** Accepted (200), refused (429, or 403 once refusals past the threshold start a ban), and anything else. */
export const tally = (statuses: number[]) => ({
  accepted: statuses.filter((status) => status === 200).length,
  refused: statuses.filter((status) => status === 429 || status === 403).length,
  other: statuses.filter((status) => ![200, 403, 429].includes(status)).length,
});
