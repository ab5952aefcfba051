// The bench's peer: PostGraphile v5 (Amber preset) served by grafserv on node:http with a pg Pool
// of 10 over the bench database, reporting its statements, CPU and memory to the bench over IPC.
import { createServer } from 'node:http';
import pg from 'pg';

// PostGraphile v5 declares Node >= 22; on Node 20 this is the one API it lacks.
Promise.withResolvers ??= function withResolvers() {
  let resolve;
  let reject;
  const promise = new this((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const { postgraphile } = await import('postgraphile');
const { grafserv } = await import('postgraphile/grafserv/node');
const { PostGraphileAmberPreset } = await import('postgraphile/presets/amber');
const { makePgService } = await import('postgraphile/adaptors/pg');

// Counted as the other contenders count theirs (server-stats.ts): every statement a pg client sends.
let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  statements += 1;
  return query.apply(this, args);
};

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ pool, schemas: ['public'] })],
  grafast: { explain: false },
  grafserv: { graphqlPath: '/graphql', watch: false, graphiql: false },
};
const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.keepAliveTimeout = 5_000;
await serv.addTo(server);
await pgl.getSchema();

process.on('message', (message) => {
  if (message === 'stats') {
    const cpu = process.cpuUsage();
    const { rss, heapTotal, heapUsed } = process.memoryUsage();
    process.send?.({ stats: { statements, cpuMicros: cpu.user + cpu.system, rss, heapTotal, heapUsed } });
  } else if (message === 'stop') {
    server.closeAllConnections();
    void pgl.release().then(() => pool.end()).then(() => process.exit(0));
  }
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
