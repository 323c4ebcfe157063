import type { AppealList, ModerationDecision, ReportReason, ReportList } from '@agent-registry/sdk';
import { MODERATION_REASONS, RESTORATION_REASONS } from '@agent-registry/protocol/limits';
import { Option, type Command } from 'commander';
import { contextOf, type CliContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';
import { agentClient, anonymousClient } from '../registry.js';
import { isRegistryError } from '../registry-error.js';
import { isRemoteEntryId } from '../remote-entry.js';

/** The operator's token from --admin-token or $FEDERATION_ADMIN_TOKEN; a usage error without one. */
function adminToken(cli: CliContext, given: string | undefined, what: string): string {
  const token = given ?? cli.env.FEDERATION_ADMIN_TOKEN;
  if (token === undefined || token.trim() === '')
    throw new UsageError(
      `${what} needs the registry's FEDERATION_ADMIN_TOKEN: pass --admin-token or set FEDERATION_ADMIN_TOKEN`,
      'ADMIN_TOKEN_MISSING',
    );
  return token;
}

/** A refused operator token is exit 4 with what to pass, not the agent's `login` hint. */
async function asOperator<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isRegistryError(error) && error.status === 401)
      throw new CliError(
        `${what} was refused (${error.details}); the token given (--admin-token or FEDERATION_ADMIN_TOKEN) was not accepted`,
        EXIT.auth,
        error.code,
      );
    throw error;
  }
}

function printDecision(cli: CliContext, decision: ModerationDecision): void {
  cli.out.result(decision, () =>
    cli.out.fields([
      [decision.action, decision.target],
      ['reason', decision.reason],
      ['note', decision.note],
      ['log entry', decision.seq],
      ['at', new Date(decision.decided_at).toISOString()],
    ]),
  );
}

export function registerReport(program: Command): void {
  const command = program
    .command('report')
    .description(
      "Report an agent (DID) or a remote entry (id) to the registry's operator; with --task it counts as verified. One report per agent and target",
    )
    .argument('<target>', "the agent's DID or the remote entry's id")
    .addOption(
      new Option('--reason <reason>', 'what is wrong').choices(MODERATION_REASONS).makeOptionMandatory(),
    )
    .option('--details <text>', 'what you saw, for the operator only (at most 2,000 characters)')
    .option('--task <task-id>', 'a task in which you invoked the target, as evidence')
    .action(
      async (
        target: string,
        options: { reason: ReportReason; details?: string; task?: string },
        self: Command,
      ) => {
        const cli = contextOf(self);
        const connection = await agentClient(cli);
        const receipt = await connection.client.moderation.report({
          target,
          reason: options.reason,
          ...(options.details === undefined ? {} : { details: options.details }),
          ...(options.task === undefined ? {} : { task_id: options.task }),
        });
        cli.out.result(receipt, () =>
          cli.out.fields([
            ['reported', receipt.target],
            ['report', receipt.id],
            ['reason', receipt.reason],
            ['verified', receipt.verified ? 'yes' : 'no'],
          ]),
        );
      },
    );
  withExamples(
    command,
    'agent-registry report did:web:registry.example:agent:0123... --reason malware --task <task-id>',
    'agent-registry report mcp:registry.modelcontextprotocol.io:io.example/server --reason spam --details "ads only"',
  );
}

export function registerAppeal(program: Command): void {
  const command = program
    .command('appeal')
    .description(
      "Appeal this agent's suspension, once per decision, signed with its key (its token is refused while suspended)",
    )
    .argument('<statement>', 'what the operator should know (at most 2,000 characters)')
    .option(
      '--decision <seq>',
      'the suspension appealed (its seq in GET /api/moderation; default: the latest)',
    )
    .action(async (statement: string, options: { decision?: string }, self: Command) => {
      const cli = contextOf(self);
      const { client, did } = await agentClient(cli);
      let decision = options.decision === undefined ? undefined : Number(options.decision);
      if (decision !== undefined && !Number.isSafeInteger(decision))
        throw new UsageError('--decision must be the seq of a decision, as GET /api/moderation lists it');
      if (decision === undefined) {
        const latest = (await client.moderation.decisions({ target: did, limit: 1 })).decisions[0];
        if (latest === undefined || latest.action !== 'suspended')
          throw new UsageError(`${did} is not suspended: there is nothing to appeal`, 'NOT_SUSPENDED');
        decision = latest.seq;
      }
      const appeal = await client.appealSuspension(decision, statement);
      cli.out.result(appeal, () =>
        cli.out.fields([
          ['appealed', `decision ${decision}`],
          ['agent', did],
        ]),
      );
    });
  withExamples(
    command,
    'agent-registry appeal "The flagged tool was removed in version 2"',
    'agent-registry appeal "Not our agent: see our domain proof" --decision 42',
  );
}

export function registerAdmin(program: Command): void {
  const admin = program
    .command('admin')
    .description(
      "For a registry's operator (FEDERATION_ADMIN_TOKEN): abuse reports, suspending and restoring agents (docs/moderation.md)",
    );
  const tokenOption = () =>
    new Option(
      '--admin-token <token>',
      "the registry's FEDERATION_ADMIN_TOKEN (default: $FEDERATION_ADMIN_TOKEN)",
    );

  const reports = admin
    .command('reports')
    .description('Abuse reports, newest first, with their reporter and evidence')
    .option('--target <target>', 'only the reports of this DID or remote entry id')
    .addOption(new Option('--reason <reason>', 'only this reason').choices(MODERATION_REASONS))
    .addOption(new Option('--state <state>', 'only open or actioned reports').choices(['open', 'actioned']))
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .addOption(tokenOption())
    .action(
      async (
        options: {
          target?: string;
          reason?: ReportReason;
          state?: 'open' | 'actioned';
          cursor?: string;
          adminToken?: string;
        },
        self: Command,
      ) => {
        const cli = contextOf(self);
        const token = adminToken(cli, options.adminToken, 'admin reports');
        const { adminToken: _token, ...query } = options;
        const client = await anonymousClient(cli);
        const page: ReportList = await asOperator('GET /api/admin/reports', () =>
          client.moderation.reports(token, query),
        );
        cli.out.result(page, () => {
          cli.out.table(
            page.reports,
            [
              { header: 'report', value: (report) => report.id },
              { header: 'target', value: (report) => report.target, max: 60 },
              { header: 'reason', value: (report) => report.reason },
              { header: 'verified', value: (report) => (report.verified ? 'yes' : 'no') },
              { header: 'state', value: (report) => report.state },
              { header: 'reporter', value: (report) => report.reporter_did, max: 60 },
              { header: 'details', value: (report) => report.details ?? '', max: 50 },
            ],
            'no reports',
          );
          if (page.next_cursor !== null) cli.out.line(`(more: --cursor ${page.next_cursor})`);
        });
      },
    );
  withExamples(reports, 'FEDERATION_ADMIN_TOKEN=... agent-registry admin reports --state open');

  const appeals = admin
    .command('appeals')
    .description("Suspended agents' appeals, newest first")
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .addOption(tokenOption())
    .action(async (options: { cursor?: string; adminToken?: string }, self: Command) => {
      const cli = contextOf(self);
      const token = adminToken(cli, options.adminToken, 'admin appeals');
      const client = await anonymousClient(cli);
      const page: AppealList = await asOperator('GET /api/admin/appeals', () =>
        client.moderation.appeals(token, options.cursor === undefined ? {} : { cursor: options.cursor }),
      );
      cli.out.result(page, () => {
        cli.out.table(
          page.appeals,
          [
            { header: 'decision', value: (appeal) => String(appeal.decision) },
            { header: 'agent', value: (appeal) => appeal.did, max: 60 },
            { header: 'at', value: (appeal) => new Date(appeal.created_at).toISOString() },
            { header: 'statement', value: (appeal) => appeal.statement, max: 60 },
          ],
          'no appeals',
        );
        if (page.next_cursor !== null) cli.out.line(`(more: --cursor ${page.next_cursor})`);
      });
    });
  withExamples(appeals, 'FEDERATION_ADMIN_TOKEN=... agent-registry admin appeals');

  const decide = (action: 'suspend' | 'restore', reasons: readonly string[], description: string) => {
    const command = admin
      .command(action)
      .description(description)
      .argument('<target>', "the agent's DID, or a remote entry's id (a2a:..., mcp:..., peer:...)")
      .addOption(
        new Option('--reason <reason>', 'the reason class, public').choices(reasons).makeOptionMandatory(),
      )
      .option('--note <text>', 'a public note (at most 500 characters)')
      .addOption(tokenOption())
      .action(
        async (
          did: string,
          options: { reason: string; note?: string; adminToken?: string },
          self: Command,
        ) => {
          const cli = contextOf(self);
          const token = adminToken(cli, options.adminToken, `admin ${action}`);
          const client = (await anonymousClient(cli)).moderation;
          const body = { ...(options.note === undefined ? {} : { note: options.note }) };
          const entry = isRemoteEntryId(did);
          const suspension = { ...body, reason: options.reason as ReportReason };
          const restoration = { ...body, reason: options.reason as (typeof RESTORATION_REASONS)[number] };
          const route = entry ? `/api/admin/entries/{id}/${action}` : `/api/admin/agents/{did}/${action}`;
          const decision = await asOperator(`POST ${route}`, () =>
            action === 'suspend'
              ? entry
                ? client.suspendEntry(token, did, suspension)
                : client.suspend(token, did, suspension)
              : entry
                ? client.restoreEntry(token, did, restoration)
                : client.restore(token, did, restoration),
          );
          printDecision(cli, decision);
        },
      );
    return command;
  };
  withExamples(
    decide(
      'suspend',
      MODERATION_REASONS,
      'Suspend an agent: it leaves every search and listing, its invocations and token answer AGENT_SUSPENDED, and the decision is logged and listed publicly',
    ),
    'agent-registry admin suspend did:web:registry.example:agent:0123... --reason malware --note "serves an executable"',
  );
  withExamples(
    decide(
      'restore',
      RESTORATION_REASONS,
      'Restore a suspended agent as it was; the decision is logged and listed publicly',
    ),
    'agent-registry admin restore did:web:registry.example:agent:0123... --reason resolved',
  );
}
