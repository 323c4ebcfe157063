import {
  LimitNode,
  OperationNodeTransformer,
  ValueNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * Writes a query's LIMIT into its SQL text on SQLite instead of binding it: with `LIMIT ?` bound, SQLite ran
 * the same statement slower on every call (docs/decisions/performance.md, "Literal LIMIT on SQLite"). Only
 * integer limits are written in, and a limit has few distinct values, so the statement cache stays small;
 * OFFSET (up to a million distinct values) stays bound.
 */
export class LiteralLimits implements KyselyPlugin {
  private readonly transformer = new LimitTransformer();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

class LimitTransformer extends OperationNodeTransformer {
  protected override transformLimit(node: LimitNode): LimitNode {
    const limit = node.limit;
    if (
      ValueNode.is(limit) &&
      typeof limit.value === 'number' &&
      Number.isSafeInteger(limit.value) &&
      limit.value >= 0
    ) {
      return LimitNode.create(ValueNode.createImmediate(limit.value));
    }
    return super.transformLimit(node);
  }
}
