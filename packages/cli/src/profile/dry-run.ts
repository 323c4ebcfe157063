import type { AgentKey, RegistryClient } from '@agent-registry/sdk';

/** The stored size of a profile as the registry measures it: its text members and capabilities as JSON. */
export function storedProfileBytes(profile: Record<string, unknown>): number {
  const capabilities = Array.isArray(profile.capabilities)
    ? (profile.capabilities as Record<string, unknown>[]).map((capability) => {
        // The stored form: known members only, absent optional ones left out.
        const stored: Record<string, unknown> = { type: capability.type };
        for (const member of ['description', 'input_schema', 'output_schema'])
          if (capability[member] != null) stored[member] = capability[member];
        return stored;
      })
    : [];
  let bytes = 0;
  for (const text of [profile.name, profile.description, profile.avatar, profile.website])
    if (typeof text === 'string' && text !== '') bytes += Buffer.byteLength(text, 'utf8');
  bytes += Buffer.byteLength(JSON.stringify(capabilities), 'utf8');
  bytes += Buffer.byteLength(JSON.stringify(profile.tags ?? []), 'utf8');
  return bytes;
}

export interface DryRunReport {
  registry: string;
  audience: string;
  key_type: string;
  profile_bytes: number;
  profile_max_bytes: number;
  proof_of_work_bits: number;
  problems: string[];
}

/**
 * What registering would meet at this registry, read from its published rules (`GET /api/stats`,
 * `governance.identity`) and its audience: the key type and chain it takes and the size it stores.
 * Registers nothing.
 */
export async function dryRunRegistration(
  client: RegistryClient,
  key: AgentKey,
  profile: Record<string, unknown>,
): Promise<DryRunReport> {
  const { identity } = (await client.getStats()).governance;
  const audience = await client.signingAudience();
  const problems: string[] = [];
  if (!identity.key_types.includes(key.keyType))
    problems.push(`key.json is a ${key.keyType} key; this registry takes ${identity.key_types.join(', ')}`);
  if (key.chainId !== null && identity.chains.length > 0 && !identity.chains.includes(key.chainId))
    problems.push(`key.json names chain ${key.chainId}; this registry takes ${identity.chains.join(', ')}`);
  const bytes = storedProfileBytes(profile);
  if (bytes > identity.profile_max_bytes)
    problems.push(
      `the profile takes ${bytes} bytes as stored; this registry stores at most ${identity.profile_max_bytes}: shorten descriptions or schemas, or publish fewer capabilities`,
    );
  return {
    registry: client.registry,
    audience,
    key_type: key.keyType,
    profile_bytes: bytes,
    profile_max_bytes: identity.profile_max_bytes,
    proof_of_work_bits: identity.registration_proof_of_work_bits,
    problems,
  };
}
