import { EventEmitter } from 'node:events';
import type { Db } from '../db/connect.js';

export type Unsubscribe = () => void;

/**
 * "Task T changed" and "agent A has new work". Waiters re-read the database when woken, so an event
 * carries no state and a spurious wake-up is harmless. In-process here; PostgreSQL adds
 * LISTEN/NOTIFY behind the same interface so a waiter on one node wakes for a change on another.
 */
export interface TaskEvents {
  /**
   * "Task T changed", once the change has committed. `announced`: the other nodes were already told
   * inside the writing transaction (`announceTaskChange`), so only this node's waiters are woken.
   */
  taskChanged(taskId: string, options?: { announced?: boolean }): Promise<void>;
  /**
   * Inside the transaction that changes task T: tells the other nodes when, and only if, it commits.
   * PostgreSQL's NOTIFY is transactional, so this costs the change no commit of its own. In process
   * there is nobody else to tell.
   */
  announceTaskChange(trx: Db, taskId: string): Promise<void>;
  workAvailable(agentDid: string): Promise<void>;
  onTaskChanged(taskId: string, listener: () => void): Unsubscribe;
  onWorkAvailable(agentDid: string, listener: () => void): Unsubscribe;
  close(): Promise<void>;
}

export class InProcessTaskEvents implements TaskEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async taskChanged(taskId: string): Promise<void> {
    this.emitter.emit(`task:${taskId}`);
  }

  async announceTaskChange(): Promise<void> {}

  async workAvailable(agentDid: string): Promise<void> {
    this.emitter.emit(`work:${agentDid}`);
  }

  onTaskChanged(taskId: string, listener: () => void): Unsubscribe {
    return this.subscribe(`task:${taskId}`, listener);
  }

  onWorkAvailable(agentDid: string, listener: () => void): Unsubscribe {
    return this.subscribe(`work:${agentDid}`, listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }

  private subscribe(channel: string, listener: () => void): Unsubscribe {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }
}
