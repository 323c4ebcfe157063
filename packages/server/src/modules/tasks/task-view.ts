import type { TaskRow } from './tasks-store.js';
import type { TaskView } from './schemas.js';

/** A stored task as its creator reads it. */
export function taskView(task: TaskRow): TaskView {
  const view: TaskView = {
    task_id: task.id,
    status: task.status,
    capability: task.capability,
    target_did: task.target_did,
    caller_did: task.caller_did,
    created_at: Number(task.created_at),
    deadline_at: Number(task.deadline_at),
  };
  if (task.completed_at !== null) view.completed_at = Number(task.completed_at);
  if (task.output !== null) view.output = JSON.parse(task.output) as Record<string, unknown>;
  if (task.error !== null) view.error = task.error;
  return view;
}
