import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisConnection } from './redis-client';

/**
 * Gathers the commands one turn of the event loop sends on a Redis connection into one socket
 * write. A busy gateway reads several requests in one poll of its sockets, and each sends its
 * limiter hit: written one by one, each is a `write` system call (on loopback, most of what a
 * command costs the gateway); corked until the turn's check phase, they leave as one `writev`,
 * and their replies come back in one read. A command waits at most for the rest of its turn.
 *
 * A cluster client has a connection per master: its commands are written as they come.
 */
export class GatheredWrites {
  private corked: Socket | undefined;
  private readonly uncork = () => {
    const socket = this.corked;
    this.corked = undefined;
    socket?.uncork();
  };

  constructor(private readonly redis: RedisConnection) {}

  /** Call before sending a command: it then leaves with the turn's others. */
  gather(): void {
    if (this.corked !== undefined || !(this.redis instanceof Redis) || this.redis.status !== 'ready') return;
    // ioredis's connection: replaced on each reconnection, so read it afresh every turn.
    const socket = (this.redis as unknown as { stream?: Socket }).stream;
    if (socket === undefined) return;
    socket.cork();
    this.corked = socket;
    setImmediate(this.uncork);
  }
}
