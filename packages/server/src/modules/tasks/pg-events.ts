import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Db } from '../../db/connect.js';
import { WorkWaiters, type TaskEvents, type Unsubscribe } from './events.js';

const CHANNEL = 'agent_registry_events';
const RECONNECT_DELAYS_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * TaskEvents across nodes with PostgreSQL LISTEN/NOTIFY on one channel ("t:<task>" / "w:<did>").
 * Events are also raised locally at once, so a waiter on the publishing node does not wait for the
 * round trip. When the LISTEN connection drops (PostgreSQL restart), it reconnects with backoff and
 * then wakes every local waiter: each re-reads its task, so nothing completed meanwhile is missed.
 */
export class PostgresTaskEvents implements TaskEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly work = new WorkWaiters();
  private listener: pg.Client | undefined;
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly connectionString: string,
    private readonly notify: (payload: string, within?: Db) => Promise<void>,
    private readonly log: FastifyBaseLogger,
  ) {}

  static async start(
    connectionString: string,
    notify: (payload: string, within?: Db) => Promise<void>,
    log: FastifyBaseLogger,
  ): Promise<PostgresTaskEvents> {
    const events = new PostgresTaskEvents(connectionString, notify, log);
    await events.connect();
    return events;
  }

  async taskChanged(taskId: string, options: { announced?: boolean } = {}): Promise<void> {
    if (options.announced === true) this.emitter.emit(`t:${taskId}`);
    else await this.publish(`t:${taskId}`);
  }

  /** A failure here fails the transaction: the change and its announcement commit together or not at all. */
  announceTaskChange(trx: Db, taskId: string): Promise<void> {
    return this.notify(`t:${taskId}`, trx);
  }

  async workAvailable(agentDid: string, options: { localOnly?: boolean } = {}): Promise<void> {
    if (options.localOnly === true) this.work.wakeOne(agentDid);
    else await this.publish(`w:${agentDid}`);
  }

  onTaskChanged(taskId: string, listener: () => void): Unsubscribe {
    return this.subscribe(`t:${taskId}`, listener);
  }

  onWorkAvailable(agentDid: string, listener: () => void): Unsubscribe {
    return this.work.add(agentDid, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    this.emitter.removeAllListeners();
    this.work.clear();
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => undefined);
  }

  private async publish(payload: string): Promise<void> {
    this.deliver(payload);
    try {
      await this.notify(payload);
    } catch (error) {
      // Other nodes' waiters still re-read at their deadline or when LISTEN comes back.
      this.log.warn({ err: error, payload }, 'NOTIFY failed');
    }
  }

  /** A task's change wakes all its waiters; an agent's new work wakes one of its polls on this node. */
  private deliver(payload: string): void {
    if (payload.startsWith('w:')) this.work.wakeOne(payload.slice(2));
    else this.emitter.emit(payload);
  }

  private subscribe(channel: string, listener: () => void): Unsubscribe {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: 3000 });
    client.on('notification', (message) => {
      if (message.payload !== undefined) this.deliver(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('LISTEN connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.listener = client;
    this.attempt = 0;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || this.listener !== client) return;
    this.listener = undefined;
    this.log.warn({ err: error }, 'LISTEN connection lost; reconnecting');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const delay = RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)] as number;
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.connect().then(
        () => {
          this.log.info('LISTEN re-established; waking waiters to re-check their tasks');
          for (const channel of this.emitter.eventNames()) this.emitter.emit(channel);
          this.work.wakeAll();
        },
        (error: unknown) => {
          if (this.closed) return;
          this.log.warn({ err: error }, 'LISTEN reconnect failed');
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }
}

export const NOTIFY_CHANNEL = CHANNEL;
