import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { reportStatsOverIpc } from './server-stats';

/**
 * The raw limit: bare node:http and a pg Pool of 10, one parameterised statement per request,
 * answering the bench's questions in the gateway's response shapes (a JSON POST, as GraphQL is
 * asked) or, cheaper still, as `GET /pet/:id` and `GET /pets50` answering the rows as they come.
 * No limiter, no auth.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const Q1 = `SELECT p.id, p.name, c.name AS category FROM pets p JOIN categories c ON c.id = p.category_id WHERE p.id = $1`;
const Q2 = `SELECT p.id, p.name, p.status, c.id AS category_id, c.name AS category, i.quantity
              FROM pets p JOIN categories c ON c.id = p.category_id JOIN inventory_items i ON i.pet_id = p.id
             ORDER BY p.id LIMIT 50`;
const Q2_GET = Q2.replace('LIMIT 50', 'LIMIT $1');
const PET = 'SELECT id, name, category_id, status FROM pets WHERE id = $1';
const PLACE = `WITH taken AS (
                 UPDATE inventory_items SET quantity = quantity - 1,
                        status = CASE WHEN quantity - 1 > 0 THEN 'available'::pet_status ELSE 'pending'::pet_status END
                  WHERE pet_id = $1 AND quantity >= 1 RETURNING pet_id)
               INSERT INTO orders (pet_id, quantity, api_key_id)
               SELECT pet_id, 1, (SELECT min(id) FROM api_keys) FROM taken RETURNING id`;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<{ operationName?: string; variables?: Record<string, string> }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === 'GET' && req.url?.startsWith('/pet/')) {
    const { rows } = await pool.query(Q1, [req.url.slice(5)]);
    return send(res, rows[0] ? 200 : 404, rows[0] ?? null);
  }
  if (req.method === 'GET' && req.url === '/pets50') {
    return send(res, 200, (await pool.query(Q2_GET, [50])).rows);
  }
  if (req.method === 'GET' && req.url?.startsWith('/pets/')) {
    const { rows } = await pool.query(PET, [req.url.slice(6)]);
    const pet = rows[0];
    return send(res, pet ? 200 : 404, pet && { id: Number(pet.id), name: pet.name, categoryId: Number(pet.category_id), status: pet.status });
  }
  const { operationName, variables = {} } = await readJson(req);
  if (operationName === 'Q1') {
    const { rows } = await pool.query(Q1, [variables.id]);
    const pet = rows[0];
    return send(res, 200, { data: { pet: pet ? { id: pet.id, name: pet.name, category: { name: pet.category } } : null } });
  }
  if (operationName === 'Q2') {
    const { rows } = await pool.query(Q2);
    const nodes = rows.map((p) => ({
      id: p.id,
      name: p.name,
      status: p.status.toUpperCase(),
      category: { id: p.category_id, name: p.category },
      inventory: { quantity: p.quantity },
    }));
    return send(res, 200, { data: { pets: { nodes } } });
  }
  if (operationName === 'PlaceOrder') {
    const { rows } = await pool.query(PLACE, [variables.petId]);
    return send(res, 200, { data: { placeOrder: rows[0] ? { id: rows[0].id } : null } });
  }
  send(res, 400, { errors: [{ message: 'unknown operation' }] });
}

const server = createServer((req, res) => {
  answer(req, res).catch((error: unknown) => send(res, 500, { errors: [{ message: String(error) }] }));
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  reportStatsOverIpc(async () => {
    server.closeAllConnections();
    await pool.end();
  });
  process.send?.({ port: (server.address() as AddressInfo).port });
});
