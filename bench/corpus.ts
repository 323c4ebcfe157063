/**
 * Deterministic synthetic agents, varied enough that search behaves as on real data: capability types,
 * tags and words follow Zipf-like distributions (a few are very common, most are rare), names combine
 * several word lists, descriptions are 8-40 words from a ~400-word vocabulary with some stemming variety.
 */

/** mulberry32: small, fast, seedable; the same seed gives the same registry every run. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks index i of n with probability proportional to 1/(i+1)^s. */
export function zipf(n: number, s: number): (random: () => number) => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += 1 / Math.pow(i + 1, s);
    cumulative.push(total);
  }
  return (random) => {
    const target = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export const CAPABILITY_TYPES = [
  'translation',
  'summarization',
  'code-review',
  'question-answering',
  'web-search',
  'data-extraction',
  'sentiment-analysis',
  'image-generation',
  'classification',
  'speech-to-text',
  'text-to-speech',
  'code-generation',
  'sql-generation',
  'ocr',
  'scheduling',
  'email-drafting',
  'document-parsing',
  'entity-recognition',
  'recommendation',
  'fraud-detection',
  'price-forecasting',
  'legal-research',
  'medical-coding',
  'invoice-processing',
  'customer-support',
  'market-research',
  'image-captioning',
  'video-summarization',
  'spam-filtering',
  'data-cleaning',
  'report-writing',
  'unit-test-generation',
  'vulnerability-scanning',
  'log-analysis',
  'anomaly-detection',
  'route-planning',
  'weather-forecasting',
  'contract-review',
  'resume-screening',
  'meeting-notes',
  'keyword-extraction',
  'plagiarism-check',
  'grammar-correction',
  'paraphrasing',
  'music-generation',
  'translation-review',
  'geocoding',
  'currency-conversion',
  'tax-calculation',
  'portfolio-analysis',
  'news-monitoring',
  'social-media-posting',
  'chart-generation',
  'pdf-generation',
  'calendar-sync',
  'crm-update',
  'lead-scoring',
  'churn-prediction',
  'inventory-forecasting',
  'quality-inspection',
];

export const TAGS = [
  'en',
  'fr',
  'de',
  'es',
  'it',
  'pt',
  'nl',
  'ja',
  'zh',
  'ko',
  'ar',
  'ru',
  'pl',
  'sv',
  'tr',
  'hi',
  'python',
  'typescript',
  'rust',
  'go',
  'java',
  'sql',
  'finance',
  'healthcare',
  'legal',
  'retail',
  'logistics',
  'education',
  'gaming',
  'marketing',
  'security',
  'devops',
  'research',
  'media',
  'energy',
  'insurance',
  'realtime',
  'batch',
  'gpu',
  'low-latency',
  'open-source',
  'enterprise',
  'free',
  'beta',
  'verified',
  'llm',
  'vision',
  'audio',
  'nlp',
  'analytics',
];
// Plus a long tail of rarer tags, so tag filters also see selective values.
for (let i = 0; i < 350; i++) TAGS.push(`topic-${i}`);

const ADJECTIVES = [
  'swift',
  'clever',
  'polyglot',
  'precise',
  'tireless',
  'friendly',
  'quantum',
  'silent',
  'bright',
  'nimble',
  'curious',
  'steady',
  'bold',
  'calm',
  'deep',
  'eager',
  'fluent',
  'golden',
  'honest',
  'keen',
  'lucid',
  'mighty',
  'noble',
  'rapid',
  'sharp',
  'smart',
  'solid',
  'vivid',
  'wise',
  'zen',
];
const NOUNS = [
  'translator',
  'scribe',
  'oracle',
  'analyst',
  'assistant',
  'reviewer',
  'scout',
  'curator',
  'navigator',
  'engine',
  'pilot',
  'sentinel',
  'crafter',
  'writer',
  'reader',
  'broker',
  'planner',
  'auditor',
  'tutor',
  'agent',
  'bot',
  'helper',
  'researcher',
  'forecaster',
  'inspector',
  'summarizer',
  'parser',
  'detective',
  'coach',
  'mentor',
];
const PLACES = [
  'Paris',
  'Berlin',
  'Lisbon',
  'Tokyo',
  'Austin',
  'Nairobi',
  'Oslo',
  'Lima',
  'Seoul',
  'Dublin',
  'Delhi',
  'Cairo',
  'Quebec',
  'Milan',
  'Zurich',
  'Sydney',
];

/** ~400 words of the kind agent descriptions use, most frequent first. */
export const WORDS = (
  'agent fast accurate reliable data text documents api users teams business language model results ' +
  'support quality secure private cloud local batch streaming realtime analysis insights reports ' +
  'translate translates translation translations summarize summaries summary review reviews code ' +
  'search searches extract extraction classify classification detect detection generate generates ' +
  'images image audio video speech voice transcripts transcription invoices receipts contracts legal ' +
  'medical clinical finance financial market markets trading prices forecast forecasts forecasting ' +
  'customers customer tickets support emails email calendar meetings notes schedule scheduling ' +
  'research papers articles news feeds social media posts sentiment opinions entities keywords ' +
  'tables spreadsheets charts dashboards sql queries databases logs metrics anomalies alerts ' +
  'security vulnerabilities scans compliance audit audits risk fraud payments banking insurance ' +
  'claims healthcare patients records retail products inventory orders shipping logistics routes ' +
  'maps weather energy grid sensors devices iot manufacturing inspection defects quality education ' +
  'students lessons quizzes grading essays grammar style tone paraphrase rewrite creative stories ' +
  'music songs lyrics games players chat conversation dialogue assistant questions answers knowledge ' +
  'wiki documentation manuals pdf ocr scanned handwriting forms fields validation cleaning ' +
  'deduplication enrichment crm leads sales churn retention recommendation recommendations ranking ' +
  'personalization marketing campaigns ads copy seo content blog newsletter french german spanish ' +
  'italian portuguese dutch japanese chinese korean arabic russian polish swedish turkish hindi ' +
  'english multilingual cross lingual domain specific fine tuned open source enterprise grade ' +
  'scalable cheap affordable premium free trial beta stable production tested benchmarked evaluated ' +
  'python typescript rust golang java kotlin swift javascript notebooks pipelines workflows ' +
  'automation integration webhooks queue async sync events triggers monitoring observability ' +
  'tracing debugging testing unit integration coverage refactoring linting formatting migration ' +
  'upgrade deployment kubernetes docker serverless edge gpu cpu latency throughput accuracy ' +
  'precision recall benchmark leaderboard state art transformer embeddings vectors retrieval rag ' +
  'context window tokens prompt prompts chain tools planning reasoning math calculations statistics ' +
  'tax accounting bookkeeping ledger reconciliation budgeting portfolio investment crypto wallet ' +
  'ethereum blockchain smart contracts nft defi exchange currency conversion rates travel flights ' +
  'hotels bookings restaurants recipes nutrition fitness health sleep mental wellbeing therapy ' +
  'coaching career resumes jobs hiring interviews candidates screening onboarding training policy ' +
  'government public sector nonprofit climate sustainability carbon emissions agriculture crops'
).split(' ');

export const SEARCH_QUERIES = [
  'translate',
  'french translation',
  'summarize legal',
  'code review',
  'invoice',
  'sentiment',
  'medical records',
  'fraud detection',
  'python',
  'realtime transcription',
  'market forecast',
  'contract',
  'customer support emails',
  'image',
  'sql',
  'kubernetes',
  'tax',
  'spanish',
  'weather',
  'resume screening',
  'pdf ocr',
  'crypto wallet',
  'swift',
  'oracle',
];

export interface SyntheticCapability {
  type: string;
  description?: string;
  tags?: string[];
}

export interface SyntheticProfile {
  name: string;
  description: string;
  capabilities: SyntheticCapability[];
  tags: string[];
}

const pickCapability = zipf(CAPABILITY_TYPES.length, 1.0);
const pickTag = zipf(TAGS.length, 1.1);
const pickWord = zipf(WORDS.length, 0.9);

function words(random: () => number, min: number, max: number): string {
  const count = min + Math.floor(random() * (max - min + 1));
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[pickWord(random)] as string);
  return out.join(' ');
}

const sentence = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1) + '.';

function distinct<T>(random: () => number, pick: (random: () => number) => T, count: number): T[] {
  const set = new Set<T>();
  for (let guard = 0; set.size < count && guard < count * 10; guard++) set.add(pick(random));
  return [...set];
}

/** The n-th synthetic agent's profile; deterministic in (seed, n). */
export function syntheticProfile(random: () => number, n: number): SyntheticProfile {
  const adjective = ADJECTIVES[Math.floor(random() * ADJECTIVES.length)] as string;
  const noun = NOUNS[Math.floor(random() * NOUNS.length)] as string;
  const place = random() < 0.3 ? ` of ${PLACES[Math.floor(random() * PLACES.length)]}` : '';
  const name = `${adjective[0]?.toUpperCase()}${adjective.slice(1)} ${noun}${place} ${n.toString(36)}`;
  const capabilityCount = 1 + Math.floor(Math.pow(random(), 2) * 4);
  const capabilities = distinct(
    random,
    (r) => CAPABILITY_TYPES[pickCapability(r)] as string,
    capabilityCount,
  ).map((type): SyntheticCapability => {
    const capability: SyntheticCapability = { type };
    if (random() < 0.85)
      capability.description = sentence(`${type.replace(/-/g, ' ')} ${words(random, 3, 12)}`);
    if (random() < 0.5)
      capability.tags = distinct(random, (r) => TAGS[pickTag(r)] as string, 1 + Math.floor(random() * 3));
    return capability;
  });
  return {
    name,
    description: sentence(words(random, 8, 40)),
    capabilities,
    tags: distinct(random, (r) => TAGS[pickTag(r)] as string, Math.floor(random() * 7)),
  };
}

/** A small profile for agents registered during the run. */
export function registrationProfile(random: () => number, n: number): SyntheticProfile {
  const profile = syntheticProfile(random, n);
  return {
    ...profile,
    description: sentence(words(random, 6, 16)),
    capabilities: profile.capabilities.slice(0, 2),
  };
}
