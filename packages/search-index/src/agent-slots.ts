import { agentIndexEntries } from './agent-entries.js';
import { Bitmap } from './bitmap.js';
import { CAPABILITY_SPACE, PostingLists, SlotPostingIds, TAG_SPACE } from './postings.js';
import type { IndexedAgent, RankKey } from './model.js';
import { SortedOrder } from './sorted-order.js';
import { PROBE_SLOT, StringTable } from './string-table.js';
import { FIELDS, indexWords } from './text.js';
import { withRoom } from './typed-arrays.js';
import { Vocabulary } from './vocabulary.js';
import { WordLevelLists } from './word-level-lists.js';

/**
 * The index's store: each active agent in a slot (a small integer), with its DID, the keys it is ranked
 * by, its postings and its place in the reputation and creation orders. Slot 0 (PROBE_SLOT) is never an
 * agent: it holds a cursor's keys so that comparators can place the cursor. Searches read the columns;
 * only this class writes them (growing them may replace the arrays, so read them through the store).
 */
export class AgentSlots {
  private capacity = 1024;
  readonly dids = new StringTable();
  reputation = new Float64Array(this.capacity);
  averageRating = new Float64Array(this.capacity);
  totalReviews = new Float64Array(this.capacity);
  createdAt = new Float64Array(this.capacity);
  /** Per slot, scratch for relevance scores; the probe slot holds a cursor's. */
  scores = new Int32Array(this.capacity);
  /** Reused for taking matches out of bitmaps, so a search allocates no large arrays. */
  candidatesBuffer = new Uint32Array(1024);
  hitsBuffer = new Uint32Array(1024);
  readonly live = new Bitmap();

  readonly postings = new PostingLists();
  readonly vocabulary = new Vocabulary();
  readonly levelLists: WordLevelLists;

  readonly byReputation = new SortedOrder(
    (a, b) =>
      (this.reputation[b] as number) - (this.reputation[a] as number) ||
      (this.averageRating[b] as number) - (this.averageRating[a] as number) ||
      (this.totalReviews[b] as number) - (this.totalReviews[a] as number) ||
      (this.createdAt[b] as number) - (this.createdAt[a] as number) ||
      this.dids.compare(b, a),
  );
  readonly byCreation = new SortedOrder(
    (a, b) => (this.createdAt[b] as number) - (this.createdAt[a] as number) || this.dids.compare(b, a),
  );

  private readonly postingsOfSlot = new SlotPostingIds();
  private readonly free: number[] = [];
  private nextSlot = PROBE_SLOT + 1;
  /** While a bulk load runs: the slots loaded, made live at its end. */
  private loading = false;
  private loaded: number[] = [];

  constructor(levelListsFrom: number) {
    this.levelLists = new WordLevelLists(this.postings, levelListsFrom);
  }

  /** Adds, replaces or (when not active) removes an agent. */
  apply(agent: IndexedAgent): void {
    const existing = this.dids.slotOf(agent.did);
    if (existing !== undefined) this.removeSlot(existing);
    if (agent.status !== 'active') return;
    const { slot, postingIds } = this.store(agent);
    this.levelLists.added(slot, postingIds);
    this.live.add(slot);
    this.byReputation.insert(slot);
    this.byCreation.insert(slot);
  }

  /** See SearchIndex.beginLoad: a bulk load into a store that never held an agent. */
  beginLoad(): void {
    // Never held an agent: the level lists of stems once tracked would not be rebuilt by a load.
    if (this.nextSlot !== PROBE_SLOT + 1 || this.loading)
      throw new Error('search index: a load is for a new index');
    this.loading = true;
    this.postings.beginBulk();
    this.vocabulary.beginBulk();
  }

  loadBatch(agents: Iterable<IndexedAgent>): void {
    if (!this.loading) throw new Error('search index: loadBatch() outside beginLoad()/endLoad()');
    for (const agent of agents) {
      if (agent.status !== 'active' || this.dids.has(agent.did)) continue;
      this.loaded.push(this.store(agent).slot);
    }
  }

  endLoad(): void {
    this.postings.endBulk();
    this.vocabulary.endBulk();
    this.levelLists.loaded(this.vocabulary.size);
    this.live.addMany(Uint32Array.from(this.loaded));
    this.loaded = [];
    this.loading = false;
    const slots = Int32Array.from(this.live.toUint32Array());
    this.byReputation.reset(slots);
    this.byCreation.reset(slots);
  }

  /** Puts a cursor's keys (and relevance score) in the probe slot, placed in both orders; answers the slot. */
  placeProbe(key: RankKey, score: number): number {
    this.dids.setProbe(key.did);
    this.reputation[PROBE_SLOT] = key.reputation;
    this.averageRating[PROBE_SLOT] = key.averageRating;
    this.totalReviews[PROBE_SLOT] = key.totalReviews;
    this.createdAt[PROBE_SLOT] = key.createdAt;
    // Scores are small integers; a cursor's is clamped so that an altered one cannot wrap around.
    this.scores[PROBE_SLOT] = Math.max(-1, Math.min(Math.round(score), 2 ** 20));
    this.byReputation.labelProbe(PROBE_SLOT);
    this.byCreation.labelProbe(PROBE_SLOT);
    return PROBE_SLOT;
  }

  /** A new slot holding the agent's keys and postings; not yet live nor in the orders. */
  private store(agent: IndexedAgent): { slot: number; postingIds: number[] } {
    const slot = this.allocate(agent.did);
    this.reputation[slot] = agent.reputation_score;
    this.averageRating[slot] = agent.average_rating;
    this.totalReviews[slot] = agent.total_reviews;
    this.createdAt[slot] = Number(agent.created_at);
    const postingIds = this.postingIdsOf(agent);
    for (const id of postingIds) this.postings.add(id, slot);
    this.postingsOfSlot.set(slot, postingIds);
    return { slot, postingIds };
  }

  private postingIdsOf(agent: IndexedAgent): number[] {
    const entries = agentIndexEntries(agent);
    const ids: number[] = [];
    FIELDS.forEach((field, space) => {
      for (const stem of indexWords(entries.document[field]))
        ids.push(this.postings.wordListId(space, this.vocabulary.add(stem)));
    });
    for (const type of entries.capabilityTypes) ids.push(this.postings.termListId(CAPABILITY_SPACE, type));
    for (const tag of entries.tags) ids.push(this.postings.termListId(TAG_SPACE, tag));
    return ids;
  }

  private allocate(did: string): number {
    if (did === '') throw new Error('search index: an agent without a DID');
    const slot = this.free.pop() ?? this.nextSlot++;
    if (slot >= this.capacity) this.grow();
    this.dids.set(slot, did);
    return slot;
  }

  private removeSlot(slot: number): void {
    this.byReputation.remove(slot);
    this.byCreation.remove(slot);
    const ids = this.postingsOfSlot.get(slot);
    this.levelLists.removed(slot, ids);
    for (const id of ids) this.postings.remove(id, slot);
    this.postingsOfSlot.clear(slot);
    this.live.remove(slot);
    this.dids.delete(slot);
    this.free.push(slot);
  }

  private grow(): void {
    this.capacity *= 2;
    this.reputation = withRoom(this.reputation, this.capacity);
    this.averageRating = withRoom(this.averageRating, this.capacity);
    this.totalReviews = withRoom(this.totalReviews, this.capacity);
    this.createdAt = withRoom(this.createdAt, this.capacity);
    this.scores = withRoom(this.scores, this.capacity);
    this.candidatesBuffer = new Uint32Array(this.capacity);
    this.hitsBuffer = new Uint32Array(this.capacity);
  }
}
