/** Limits of sections 2.2 and 8 of the interface, plus the ones we decided (docs/decisions.md). */
export const LIMITS = {
  nameMaxLength: 100,
  descriptionMaxLength: 1000,
  tagsMaxCount: 20,
  tagMaxLength: 50,
  urlMaxLength: 2048,
  capabilitiesMinCount: 1,
  capabilitiesMaxCount: 50,
  capabilityTypeMaxLength: 100,
  capabilityDescriptionMaxLength: 1000,
  referrerMaxLength: 256,
  timestampSkewMs: 5 * 60 * 1000,
  webhookSecretMinLength: 16,
  webhookSecretMaxLength: 256,
} as const;
