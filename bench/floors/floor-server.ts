/**
 * The HTTP floors, run in a process of their own (`startFloorServer`): bare express doing only
 * the I/O a route's answer promises, so a route's ratio to its floor is what our own code costs.
 * - GET /context: the auth-context body, from memory (the floor of an authenticated read).
 * - POST /t: the body appended to a Redis stream (one XADD) before 202 (the pixel's floor).
 * - GET /bookings/:id: one PostgreSQL query returning a booking with its lines, attempts and
 *   events as JSON (the floor of `GET /api/v1/bookings/{id}`).
 * Settings come in the environment (FLOOR_*); the port goes to the parent over IPC.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { Pool } from 'pg';

const contextBody = process.env.FLOOR_CONTEXT_BODY ?? '{}';
const streamKey = process.env.FLOOR_STREAM_KEY!;
const redis = new Redis(process.env.FLOOR_REDIS_URL!);
const pool = new Pool({ connectionString: process.env.FLOOR_DATABASE_URL!, max: 10 });

// The same content the service answers with: the booking, its lines, their attempts and its events.
const BOOKING_SQL = `select json_build_object('booking', to_jsonb(b) || jsonb_build_object(
    'lines', (select coalesce(jsonb_agg(to_jsonb(l) order by l.position), '[]'::jsonb) from booking_lines l where l.booking_id = b.id),
    'attempts', (select coalesce(jsonb_agg(to_jsonb(a) order by a.created_at), '[]'::jsonb) from supplier_attempts a
                  where a.subject_kind = 'line' and a.booking_id = b.id),
    'events', (select coalesce(jsonb_agg(to_jsonb(e) order by e.seq), '[]'::jsonb) from booking_events e where e.booking_id = b.id)))::text as body
  from bookings b where b.id = $1`;

const app = express();
app.get('/context', (_req, res) => {
  res.type('application/json').send(contextBody);
});
app.post('/t', express.json(), async (req, res) => {
  await redis.xadd(streamKey, '*', 'e', JSON.stringify(req.body));
  res.status(202).json({ accepted: true, replayed: false });
});
app.get('/bookings/:id', async (req, res) => {
  const { rows } = await pool.query<{ body: string }>({ name: 'floor-booking', text: BOOKING_SQL, values: [req.params.id] });
  if (!rows[0]) return void res.status(404).end();
  res.type('application/json').send(rows[0].body);
});

const server = http.createServer(app);
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => {
  server.close();
  redis.disconnect();
  void pool.end();
});
