import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { RedisClient } from '../../shared/redis';
import { readCookie } from '../http/cookies';
import type { Draft } from './forms';
import type { Flash } from './html';

export const SESSION_COOKIE = 'fd_console';
export const LOGIN_COOKIE = 'fd_console_login';

export interface ConsoleSession {
  /** The API access token: every request is decided from it, as the API decides. */
  accessToken: string;
  csrf: string;
  expiresAt: number;
  flash?: Flash;
  draft?: Draft;
  /** Redis keys that end with this session: the queue dashboard sessions opened from it. */
  linked?: string[];
}

export interface PendingSignIn {
  codeVerifier: string;
  returnTo: string;
}

const token = () => randomBytes(32).toString('base64url');
const hash = (v: string) => createHash('sha256').update(v).digest('hex');

export const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Server-side sessions in Redis: the browser holds only a random id (HttpOnly, SameSite=Lax,
 * Secure outside development) and Redis keys it by the id's hash, so a read of Redis yields no
 * usable cookie. The session lasts as long as its access token.
 */
export class ConsoleSessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly secure: boolean,
  ) {}

  private key = (kind: string, id: string) => `${this.prefix}:console:${kind}:${hash(id)}`;

  /** The session's Redis key: what a dashboard session opened from it is bound to. */
  keyOf = (id: string) => this.key('session', id);

  cookie(res: Response, name: string, value: string, maxAgeSeconds: number): void {
    const attrs = [`${name}=${value}`, 'Path=/console', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAgeSeconds}`];
    if (this.secure) attrs.push('Secure');
    res.append('set-cookie', attrs.join('; '));
  }

  async beginSignIn(res: Response, state: string, pending: PendingSignIn): Promise<void> {
    await this.redis.set(this.key('login', state), JSON.stringify(pending), 'EX', 600);
    this.cookie(res, LOGIN_COOKIE, state, 600);
  }

  /** The pending sign-in, once: only for the browser that started it (its cookie must carry the same state). */
  async finishSignIn(req: Request, res: Response, state: string): Promise<PendingSignIn | null> {
    const mine = readCookie(req, LOGIN_COOKIE);
    this.cookie(res, LOGIN_COOKIE, '', 0);
    if (!mine || !sameSecret(mine, state)) return null;
    const raw = await this.redis.getdel(this.key('login', state));
    return raw ? (JSON.parse(raw) as PendingSignIn) : null;
  }

  async create(res: Response, accessToken: string, expiresInSeconds: number): Promise<void> {
    const id = token();
    const ttl = Math.max(60, Math.floor(expiresInSeconds));
    const session: ConsoleSession = { accessToken, csrf: token(), expiresAt: Date.now() + ttl * 1000 };
    await this.redis.set(this.key('session', id), JSON.stringify(session), 'EX', ttl);
    this.cookie(res, SESSION_COOKIE, id, ttl);
  }

  async load(req: Request): Promise<{ id: string; session: ConsoleSession } | null> {
    const id = readCookie(req, SESSION_COOKIE);
    if (!id || !/^[A-Za-z0-9_-]{20,100}$/.test(id)) return null;
    const raw = await this.redis.get(this.key('session', id));
    return raw ? { id, session: JSON.parse(raw) as ConsoleSession } : null;
  }

  async save(id: string, session: ConsoleSession): Promise<void> {
    const ttl = Math.floor((session.expiresAt - Date.now()) / 1000);
    if (ttl > 0) await this.redis.set(this.key('session', id), JSON.stringify(session), 'EX', ttl);
  }

  /** Ends the session and everything opened from it. */
  async destroy(res: Response, id: string, session?: ConsoleSession): Promise<void> {
    await this.redis.del(this.key('session', id), ...(session?.linked ?? []));
    this.cookie(res, SESSION_COOKIE, '', 0);
  }
}
