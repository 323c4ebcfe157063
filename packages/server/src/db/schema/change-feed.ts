/**
 * One row (id 1): the last change sequence number handed out. Every transaction that changes an agent's
 * public profile increments it last, so its row lock orders commits (migration 008).
 */
export interface ChangeFeedHeadTable {
  id: number;
  seq: number;
}

export const changeFeedHeadTableName = 'change_feed_head';
export type ChangeFeedPartial = { [changeFeedHeadTableName]: ChangeFeedHeadTable };
