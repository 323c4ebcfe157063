import { Type, type Static } from '@sinclair/typebox';

export const LogProof = Type.Object(
  {
    leaf_index: Type.Integer({
      minimum: 0,
      description: "The position of the agent's latest record in the log.",
    }),
    tree_size: Type.Integer({
      minimum: 1,
      description: 'The size of the tree the proof and checkpoint are for.',
    }),
    inclusion_proof: Type.Array(Type.String(), {
      description: "RFC 6962 audit path (section 2.1.1), base64 hashes from the leaf's sibling upward.",
    }),
    entry: Type.String({ description: 'The leaf data (RFC 8785 canonical JSON), base64.' }),
    checkpoint: Type.String({ description: 'The signed checkpoint (C2SP tlog-checkpoint) for tree_size.' }),
  },
  { $id: 'LogProof', additionalProperties: false },
);
export type LogProof = Static<typeof LogProof>;
