import { EventEmitter } from 'node:events';
import type { Db } from '../../db/connect.js';

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
  /**
   * "Agent A has new work": wakes one of A's waiting long polls on each node (the one waiting longest),
   * not all of them. `localOnly`: on this node only (a wake-up a poll took but did not use).
   */
  workAvailable(agentDid: string, options?: { localOnly?: boolean }): Promise<void>;
  onTaskChanged(taskId: string, listener: () => void): Unsubscribe;
  onWorkAvailable(agentDid: string, listener: () => void): Unsubscribe;
  close(): Promise<void>;
}

/**
 * Long polls waiting for work, per agent, in the order they started waiting. One new task wakes one
 * poll, which then moves to the back; the others keep sleeping, so a task costs one read, not one per poll.
 */
export class WorkWaiters {
  private readonly byAgent = new Map<string, Set<() => void>>();

  add(agentDid: string, listener: () => void): Unsubscribe {
    let waiters = this.byAgent.get(agentDid);
    if (waiters === undefined) {
      waiters = new Set();
      this.byAgent.set(agentDid, waiters);
    }
    waiters.add(listener);
    return () => {
      const current = this.byAgent.get(agentDid);
      if (current === undefined) return;
      current.delete(listener);
      if (current.size === 0) this.byAgent.delete(agentDid);
    };
  }

  wakeOne(agentDid: string): void {
    const waiters = this.byAgent.get(agentDid);
    const first = waiters?.values().next().value;
    if (waiters === undefined || first === undefined) return;
    waiters.delete(first);
    waiters.add(first);
    first();
  }

  /** Every waiter re-reads (after a lost LISTEN connection, when events may have been missed). */
  wakeAll(): void {
    for (const waiters of this.byAgent.values()) for (const listener of [...waiters]) listener();
  }

  clear(): void {
    this.byAgent.clear();
  }
}

export class InProcessTaskEvents implements TaskEvents {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly work = new WorkWaiters();

  async taskChanged(taskId: string): Promise<void> {
    this.emitter.emit(`task:${taskId}`);
  }

  async announceTaskChange(): Promise<void> {}

  async workAvailable(agentDid: string): Promise<void> {
    this.work.wakeOne(agentDid);
  }

  onTaskChanged(taskId: string, listener: () => void): Unsubscribe {
    return this.subscribe(`task:${taskId}`, listener);
  }

  onWorkAvailable(agentDid: string, listener: () => void): Unsubscribe {
    return this.work.add(agentDid, listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    this.work.clear();
  }

  private subscribe(channel: string, listener: () => void): Unsubscribe {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }
}
