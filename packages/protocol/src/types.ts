export type KeyType = 'ed25519' | 'secp256k1';
export const KEY_TYPES: readonly KeyType[] = ['ed25519', 'secp256k1'];

export type DeliveryMode = 'none' | 'webhook' | 'queue';
export const DELIVERY_MODES: readonly DeliveryMode[] = ['none', 'webhook', 'queue'];

export type JsonObject = { [key: string]: unknown };

export interface Capability {
  type: string;
  description?: string | null;
  tags?: string[] | null;
  input_schema?: JsonObject | null;
  output_schema?: JsonObject | null;
}

/** Profile as the agent sent it at registration (section 2.2). */
export interface ProfileInput {
  name: string;
  description?: string | null;
  capabilities: Capability[];
  tags?: string[] | null;
  avatar?: string | null;
  website?: string | null;
}
