import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/common-schemas.js';

export const BuildInfo = Type.Object(
  {
    name: Type.String({ examples: ['agent-registry'] }),
    version: Type.String({ description: 'Package version', examples: ['0.1.0'] }),
    commit: Nullable(
      Type.String({
        description: 'Git commit of the build ("-dirty" with uncommitted changes); null when run from source',
      }),
    ),
    built_at: Nullable(Type.String({ format: 'date-time', description: 'When the build was made' })),
    node: Type.String({ description: 'Node.js version', examples: ['v20.19.0'] }),
  },
  { $id: 'BuildInfo' },
);

export const Health = Type.Object(
  {
    status: Type.String({ examples: ['ok'] }),
    version: Type.Optional(
      Type.String({ description: 'Version of the running build (details: GET /version)' }),
    ),
    commit: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'Health' },
);
