import { connect } from 'node:net';
import request from 'supertest';
import { ERROR_STATUS, isErrorCode } from '../../src/errors';
import { startTestApp, type TestApp } from '../helpers/app';
import { createCategory, createPet } from '../helpers/builders';
import { printFigure } from '../helpers/figures';

/**
 * Several hundred malformed requests across both surfaces. None may get a 500, and every refusal
 * must be the Error object (REST) or a GraphQL errors list carrying it; the server stays up.
 */
interface Answer {
  status: number;
  body: string;
}

interface Case {
  label: string;
  path: string;
  send: () => Promise<Answer>;
}

let t: TestApp;
let petId: string;
let client = 0;
beforeAll(async () => {
  // Behind a trusted proxy each case is its own client, so the limiter stays out of the way.
  t = await startTestApp({ TRUST_PROXY: 'true' });
  petId = await createPet(t, await createCategory(t));
});
afterAll(() => t.close());

const nextClient = () => `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client++ & 255}`;

const viaSupertest = (label: string, path: string, build: (agent: request.Agent) => request.Test): Case => ({
  label,
  path,
  send: async () => {
    const response = await build(request.agent(t.url)).set('X-Forwarded-For', nextClient()).buffer(true).parse((res, done) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      res.on('end', () => done(null, text));
    });
    return { status: response.status, body: response.body as string };
  },
});

const post = (label: string, body: string | Buffer, contentType = 'application/json', extra: Record<string, string> = {}) =>
  viaSupertest(label, '/graphql', (agent) => {
    const call = agent.post('/graphql').set(extra);
    if (contentType) call.set('Content-Type', contentType);
    return call.send(body);
  });

const query = (label: string, text: string, variables?: unknown, key?: string) =>
  post(label, JSON.stringify({ query: text, variables }), 'application/json', key ? { 'X-API-Key': key } : {});

const get = (label: string, path: string, headers: Record<string, string> = {}) =>
  viaSupertest(label, path.split('?')[0], (agent) => agent.get(path).set(headers));

/** Bytes straight onto a socket, for what an HTTP client library will not send. */
const raw = (label: string, bytes: string): Case => ({
  label,
  path: '(raw)',
  send: () =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(t.url).port), '127.0.0.1');
      let text = '';
      // Half-closing at once would let the server drop a request it answers asynchronously: close
      // once a whole answer is in, or after a second for a request the server still waits on.
      const giveUp = setTimeout(() => socket.end(), 1_000);
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        if (isWholeResponse(text)) socket.end();
      });
      socket.on('error', reject);
      socket.on('close', () => {
        clearTimeout(giveUp);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
        resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
      socket.write(bytes);
    }),
});

/** Whether `text` (read as latin1, a character a byte) holds a response's head and its whole body. */
function isWholeResponse(text: string): boolean {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd))?.[1];
  return length === undefined ? text.endsWith('\r\n0\r\n\r\n') : text.length - headEnd - 4 >= Number(length);
}

function cases(): Case[] {
  const list: Case[] = [];
  const q = '{ pets(first: 1) { totalCount } }';

  // Invalid JSON and JSON of the wrong shape.
  for (const body of ['{', '{"query":', `{"query": "${q}"`, 'nul', "{'query': 1}", '{"a":1}}', ',', '{"query":"\\x"}', '\u0000', '{"query":"x"} trailing', '[', '{{}}', '{"query": undefined}', '01', '{"query":"\ud800"}'])
    list.push(post(`invalid JSON ${JSON.stringify(body)}`, body));
  for (const body of ['null', 'true', '1', '"str"', '{}', '{"query":1}', '{"query":null}', '{"query":[]}', '{"query":{}}', '{"query":true}',
    `{"query":"${q}","variables":"x"}`, `{"query":"${q}","variables":[1]}`, `{"query":"${q}","variables":5}`, `{"query":"${q}","operationName":5}`,
    `{"query":"${q}","operationName":{}}`, `{"query":"${q}","operationName":"Nope"}`, `{"query":"${q}","extensions":"x"}`, `{"query":"${q}","extensions":[]}`,
    `{"query":"${q}","extensions":{"persistedQuery":{"version":1,"sha256Hash":"abc"}}}`, '{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"0000"}}}'])
    list.push(post(`JSON of the wrong shape ${body.slice(0, 60)}`, body));
  for (const body of ['[]', `[{"query":"${q}"}]`, `[{"query":"${q}"},{"query":"${q}"}]`, `[${Array(50).fill(`{"query":"${q}"}`).join(',')}]`])
    list.push(post(`batch ${body.slice(0, 30)}`, body));
  list.push(post('deeply nested JSON', '['.repeat(5000) + ']'.repeat(5000)));
  list.push(post('deeply nested variables', `{"query":"${q}","variables":{"a":${'['.repeat(3000)}${']'.repeat(3000)}}}`));

  // Wrong content types and empty bodies.
  for (const type of ['text/plain', 'text/html', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
    'application/octet-stream', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'application/jsonx', 'image/png', 'application/graphql', '*/*', 'application/json; charset='])
    list.push(post(`content type ${type}`, JSON.stringify({ query: q }), type));
  list.push(post('no content type', JSON.stringify({ query: q }), ''));
  for (const body of ['', ' ', '\r\n', '\t\t'])
    list.push(post(`empty body ${JSON.stringify(body)}`, body));
  list.push(post('gzip that is not gzip', JSON.stringify({ query: q }), 'application/json', { 'Content-Encoding': 'gzip' }));
  list.push(post('unknown content encoding', JSON.stringify({ query: q }), 'application/json', { 'Content-Encoding': 'lzma' }));

  // Ids: huge, negative, fractional, not numbers, in literals and variables.
  for (const id of ['9'.repeat(19), '9'.repeat(100), '9223372036854775808', '-9223372036854775808', '-1', '0', '00', '1.0', '1e3', '0x1F', ' 1', '1 ', '١٢٣', 'NaN', 'Infinity', '1;DROP TABLE pets', "1' OR '1'='1", '%', '\\u0031']) {
    list.push(query(`literal id ${id}`, `{ pet(id: ${JSON.stringify(id)}) { id } }`));
    list.push(query(`variable id ${id}`, 'query($id: ID!) { pet(id: $id) { id } }', { id }));
  }
  for (const id of [1e300, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, true, null, [], {}, [1, 2]])
    list.push(query(`variable id of type ${JSON.stringify(id)}`, 'query($id: ID!) { pet(id: $id) { id } }', { id }));

  // Numbers out of range or of the wrong type.
  for (const first of ['-1', '0', '101', '1.5', '"10"', '1e10', '2147483648', '-2147483649', 'null', 'true', '[1]', '{a: 1}'])
    list.push(query(`first: ${first}`, `{ pets(first: ${first}) { totalCount } }`));
  for (const first of [-1, 0, 101, 1.5, '10', 1e10, 2 ** 31, null, true, [1]])
    list.push(query(`first variable ${JSON.stringify(first)}`, 'query($f: Int) { pets(first: $f) { totalCount } }', { f: first }));
  for (const quantity of [0, -5, 1.5, 1001, 2 ** 31, '2', null])
    list.push(query(`placeOrder quantity ${JSON.stringify(quantity)}`, 'mutation($q: Int!, $p: ID!) { placeOrder(input: { petId: $p, quantity: $q }) { id } }', { q: quantity, p: petId }, t.adminKey));
  for (const shipDate of ['tomorrow', '2027-13-45T00:00:00Z', '', '2027-01-01', 12345, '9999999-01-01T00:00:00Z'])
    list.push(query(`placeOrder shipDate ${JSON.stringify(shipDate)}`, 'mutation($d: DateTime, $p: ID!) { placeOrder(input: { petId: $p, quantity: 1, shipDate: $d }) { id } }', { d: shipDate, p: petId }, t.adminKey));
  for (const name of ['', ' ', 'x'.repeat(101), 'x'.repeat(100_000 / 2), '\u0000', null, 5])
    list.push(query(`createCategory name ${JSON.stringify(name).slice(0, 20)}`, 'mutation($n: String!) { createCategory(input: { name: $n }) { id } }', { n: name }, t.adminKey));

  // Unknown fields, arguments and enum values.
  for (const text of ['{ pets { nope } }', '{ nope }', '{ pet(id: "1", extra: 2) { id } }', '{ pets(filter: { colour: RED }) { totalCount } }',
    '{ pets(filter: { status: LOST }) { totalCount } }', 'mutation { createPet(input: { name: "X", categoryId: "1", colour: "red" }) { id } }',
    '{ __type(name: "Nope") { name } }', 'subscription { pets { totalCount } }', 'query A { pets { totalCount } } query A { pets { totalCount } }',
    'fragment F on Pet { ...F } { pets { nodes { ...F } } }', '{ pets { totalCount } ', '{ pets { totalCount } } }', 'query($x: Unknown) { pets { totalCount } }',
    '{ pets { ... on Category { name } } }', '{ pet(id: $undefined) { id } }', '#only a comment', '', '   ', '\u0000\u0001', '{ pets { totalCount @skip } }', '{ pets { totalCount @nope } }'])
    list.push(query(`document ${JSON.stringify(text).slice(0, 40)}`, text));

  // Depth, breadth and size.
  const deep = (depth: number) => `{ pet(id: "${petId}") { ${Array.from({ length: depth }, (_, i) => ['category', 'pets(first: 1)', 'nodes'][i % 3]).reduceRight((inner, field) => `${field} { ${inner} }`, 'id')} } }`;
  for (const depth of [12, 15, 20, 30, 60])
    list.push(query(`${depth + 2}-deep query`, deep(depth)));
  list.push(query('an alias 1,000 times', `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: pet(id: "${petId}") { id }`).join(' ')} }`));
  list.push(query('a field 1,000 times', `{ ${Array(1000).fill('pets { totalCount }').join(' ')} }`));
  list.push(query('fragment fan-out', `{ pets { nodes { ...A } } } ${Array.from({ length: 30 }, (_, i) => `fragment ${String.fromCharCode(65 + (i % 26))}${i >= 26 ? i : ''} on Pet { id }`).join(' ')}`));
  list.push(query('150 kB query', `{ pets { totalCount } } # ${'x'.repeat(150_000)}`));
  list.push(post('150 kB of text', 'x'.repeat(150_000), 'text/plain'));
  list.push(post('150 kB JSON array', `[${'1,'.repeat(75_000)}1]`));

  // Bad UTF-8.
  for (const bytes of [[0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]]) {
    const bad = Buffer.concat([Buffer.from('{"query":"{ pets { totalCount } }","variables":{"x":"'), Buffer.from(bytes), Buffer.from('"}}')]);
    list.push(post(`bad UTF-8 ${bytes.map((b) => b.toString(16)).join(' ')}`, bad));
    list.push(post(`bad UTF-8 in the query ${bytes.map((b) => b.toString(16)).join(' ')}`, Buffer.concat([Buffer.from('{"query":"{ pets'), Buffer.from(bytes), Buffer.from(' { totalCount } }"}')])));
  }

  // GraphQL over GET.
  for (const search of ['', '?query=', '?query=%7B', `?query=${encodeURIComponent(q)}&variables=notjson`, `?query=${encodeURIComponent(q)}&extensions=notjson`,
    `?query=${encodeURIComponent(q)}&variables=[1]`, `?query=${encodeURIComponent('mutation { deleteCategory(id: "1") }')}`, '?query=%E0%A4%A', `?query[]=x`,
    `?query=${encodeURIComponent(q)}&query=${encodeURIComponent(q)}`, `?operationName=x`, '?%zz=1'])
    list.push(get(`GET /graphql${search}`, `/graphql${search}`, { 'Apollo-Require-Preflight': '1' }));

  // REST paths.
  for (const id of ['abc', '-1', '0', '1.5', '1e3', '0x10', '9'.repeat(25), '%00', '%FF', '%', '%zz', 'x'.repeat(5000), '١٢٣', '1%2F2', '..%2F..', ' ', '%20', 'null', '[]', '{}'])
    list.push(get(`GET /pets/${id.slice(0, 20)}`, `/pets/${id}`));
  for (const search of ['complete=yes', 'complete=', 'complete=TRUE', 'petId=abc', 'petId=-1', 'petId=' + '9'.repeat(30), 'limit=0', 'limit=101', 'limit=abc',
    'limit=1e2', 'limit=-0', 'offset=-1', 'offset=1.5', 'offset=' + '9'.repeat(30), 'limit=1&limit=2', 'complete[]=true', 'petId[a]=1', 'limit=%00', 'offset=0x10', 'complete=true&complete=false'])
    list.push(get(`GET /store/orders?${search}`, `/store/orders?${search}`, { 'X-API-Key': t.adminKey }));
  for (const [method, path] of [['post', '/pets/1'], ['put', '/pets/1'], ['patch', '/pets/1'], ['delete', '/pets/1'], ['post', '/store/orders'],
    ['delete', '/store/orders'], ['put', '/graphql'], ['patch', '/graphql'], ['delete', '/graphql'], ['post', '/openapi.json']] as const)
    list.push(viaSupertest(`${method.toUpperCase()} ${path}`, path, (agent) => agent[method](path).send('{}')));
  for (const path of ['/', '/pets', '/pets/', '/pets/1/2', '/store', '/store/orders/1', '/graphql/x', '/../etc/passwd', '//', '/%2e%2e/%2e%2e/etc/passwd', '/openapi.yaml', '/admin', '/.env', '/metrics/x'])
    list.push(get(`GET ${path}`, path));

  // Header abuse.
  for (const key of ['', ' ', 'psk_', 'psk_' + 'a'.repeat(31), 'psk_' + 'a'.repeat(500), 'Bearer abc', 'x'.repeat(8000), 'psk_' + '!'.repeat(40), 'psk_\tabc'])
    list.push(get(`X-API-Key ${JSON.stringify(key).slice(0, 20)}`, '/openapi.json', { 'X-API-Key': key }));
  for (const accept of ['text/csv', 'application/xml', 'image/*', ';;;', 'application/json;q=0', '*/*;q=abc'])
    list.push(get(`Accept ${accept}`, '/pets/1', { Accept: accept }));
  for (const accept of ['text/csv', 'application/xml', 'application/graphql-response+json;q=0, application/json;q=0'])
    list.push(post(`GraphQL Accept ${accept}`, JSON.stringify({ query: q }), 'application/json', { Accept: accept }));
  for (const id of ['x'.repeat(500), '<script>', '../../', 'a b c'])
    list.push(get(`X-Request-Id ${id.slice(0, 12)}`, '/openapi.json', { 'X-Request-Id': id }));
  list.push(get('a 20 kB header', '/openapi.json', { 'X-Padding': 'x'.repeat(20_000) }));
  list.push(get('X-Forwarded-For garbage', '/openapi.json', { 'X-Forwarded-For': 'not an address, ::::, 999.1.1.1' }));

  // What no client library sends.
  const host = 'Host: localhost\r\n';
  for (const bytes of [
    'GARBAGE\r\n\r\n',
    'GET / HTTP/9.9\r\n\r\n',
    `GET /pets/1 HTTP/1.1\r\n${host}Bad Header Line\r\n\r\n`,
    `GET /pets/1 HTTP/1.1\r\n${host}X-Long: ${'x'.repeat(20_000)}\r\n\r\n`,
    `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{"query":"{ pets { totalCount } }"}`,
    `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`,
    `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    `POST /graphql HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    `GET /${'a'.repeat(20_000)} HTTP/1.1\r\n${host}\r\n`,
    `GET /pets/1 HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n`,
    `GET /pets/1 HTTP/1.1\r\n${host}X-Request-Id: \u007f\u0001\r\nX-API-Key: \u00ff\u00fe\r\n\r\n`,
  ])
    list.push(raw(`raw ${JSON.stringify(bytes.slice(0, 30))}`, bytes));
  return list;
}

function refusalProblem(path: string, answer: Answer): string | undefined {
  if (answer.status === 500 || answer.status >= 502) return `status ${answer.status}`;
  if (answer.status === 0) return 'no HTTP answer';
  if (answer.status < 400 && !answer.body.includes('"errors"')) return undefined;
  let body: any;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return `a body that is not JSON: ${answer.body.slice(0, 80)}`;
  }
  const errorObjects = path === '/graphql' && Array.isArray(body?.errors) ? body.errors.map((error: any) => ({ ...error.extensions, message: error.message })) : [body];
  for (const error of errorObjects) {
    if (!isErrorCode(error?.code) || typeof error.message !== 'string' || ERROR_STATUS[error.code as keyof typeof ERROR_STATUS] !== error.status) {
      return `not the Error object: ${answer.body.slice(0, 120)}`;
    }
  }
  if (path !== '/graphql' && path !== '(raw)' && Object.keys(body).sort().join() !== 'code,message,status') return `extra fields: ${answer.body.slice(0, 120)}`;
  if (answer.status >= 400 && path !== '/graphql' && body.status !== answer.status) return `status ${answer.status} but body says ${body.status}`;
  return undefined;
}

it('answers hundreds of malformed requests without a 500 and always with the Error object, then serves normally', async () => {
  const all = cases();
  expect(all.length).toBeGreaterThanOrEqual(300);
  const byStatus = new Map<number, number>();
  const problems: string[] = [];
  for (let i = 0; i < all.length; i += 8) {
    const batch = all.slice(i, i + 8);
    const answers = await Promise.all(batch.map((each) => each.send()));
    answers.forEach((answer, j) => {
      byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
      const problem = refusalProblem(batch[j].path, answer);
      if (problem) problems.push(`${batch[j].label}: ${problem}`);
    });
  }
  printFigure(
    `hostile input: ${all.length} requests; by status: ${[...byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(', ')}`,
  );
  expect(problems).toEqual([]);

  const normal = await request(t.url).post('/graphql').send({ query: `{ pet(id: "${petId}") { name } }` });
  expect(normal.status).toBe(200);
  expect(normal.body).toEqual({ data: { pet: { name: 'Rex' } }, extensions: { cost: { requested: 2, actual: 2, limit: 1000 } } });
});
