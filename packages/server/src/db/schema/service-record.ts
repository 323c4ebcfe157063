/** Daily rollup of one agent's capability: outcomes and a latency histogram (modules/service-record/service-record-model.ts). */
export interface ServiceDailyTable {
  did: string;
  capability: string;
  /** UTC day number: floor(epoch ms / 86,400,000). */
  day: number;
  completed: number;
  failed: number;
  timeout: number;
  last_completed_at: number | null;
  lat_0: number;
  lat_1: number;
  lat_2: number;
  lat_3: number;
  lat_4: number;
  lat_5: number;
  lat_6: number;
  lat_7: number;
  lat_8: number;
  lat_9: number;
  lat_10: number;
  lat_11: number;
}

export interface ServiceCallersTable {
  did: string;
  day: number;
  capability: string;
  caller_did: string;
}

export interface ServiceTotalsTable {
  did: string;
  capability: string;
  completed: number;
  failed: number;
  timeout: number;
  last_completed_at: number | null;
}

export interface CallPartnersTable {
  caller_did: string;
  target_did: string;
  completed: number;
  first_completed_at: number;
}

/** `evidence` is e.g. `webhook-host:agents.example.com` or `referral:<did>`; a shared value links two agents. */
export interface IdentityEvidenceTable {
  did: string;
  evidence: string;
  created_at: number;
}

export type ServiceRecordPartial = {
  service_daily: ServiceDailyTable;
  service_callers: ServiceCallersTable;
  service_totals: ServiceTotalsTable;
  call_partners: CallPartnersTable;
  identity_evidence: IdentityEvidenceTable;
};
