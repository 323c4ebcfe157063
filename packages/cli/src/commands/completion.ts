import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { withExamples } from '../help.js';

/** One command of the tree as completion needs it: its words, its options, its subcommands. */
interface CompletionNode {
  name: string;
  description: string;
  options: string[];
  subcommands: CompletionNode[];
}

function nodeOf(command: Command, inherited: string[]): CompletionNode {
  const own = command.options.flatMap((option) => [option.long, option.short]).filter(isWord);
  const options = [...new Set([...inherited, ...own, '--help'])];
  return {
    name: command.name(),
    description:
      command
        .description()
        .split('\n')[0]
        ?.replace(/[`'"$\\]/g, '') ?? '',
    options,
    subcommands: command.commands.map((sub) => nodeOf(sub, inherited)),
  };
}

const isWord = (value: string | undefined): value is string => value !== undefined && value !== '';

/** The cases of a shell `case` statement: `command` or `command subcommand` to its candidates. */
function candidates(root: CompletionNode): Map<string, string[]> {
  const cases = new Map<string, string[]>();
  cases.set(
    '',
    root.subcommands.map((sub) => sub.name),
  );
  for (const command of root.subcommands) {
    cases.set(command.name, [...command.subcommands.map((sub) => sub.name), ...command.options]);
    for (const sub of command.subcommands) cases.set(`${command.name} ${sub.name}`, sub.options);
  }
  return cases;
}

function bash(root: CompletionNode): string {
  const cases = [...candidates(root)]
    .filter(([key]) => key !== '')
    .map(([key, words]) => `    "${key}") words="${words.join(' ')}" ;;`)
    .join('\n');
  const nested = root.subcommands.filter((command) => command.subcommands.length > 0).map((c) => c.name);
  return `# agent-registry completion for bash: source <(agent-registry completion bash)
_agent_registry() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" key="" words=""
  if [[ \${COMP_CWORD} -eq 1 ]]; then
    COMPREPLY=( $(compgen -W "${candidates(root).get('')?.join(' ') ?? ''}" -- "$cur") )
    return
  fi
  key="\${COMP_WORDS[1]}"
  case " ${nested.join(' ')} " in
    *" \${COMP_WORDS[1]} "*) [[ \${COMP_CWORD} -gt 2 ]] && key="\${COMP_WORDS[1]} \${COMP_WORDS[2]}" ;;
  esac
  case "$key" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F _agent_registry agent-registry
`;
}

function zsh(root: CompletionNode): string {
  const cases = [...candidates(root)]
    .filter(([key]) => key !== '')
    .map(([key, words]) => `    "${key}") cands=(${words.join(' ')}) ;;`)
    .join('\n');
  const nested = root.subcommands.filter((command) => command.subcommands.length > 0).map((c) => c.name);
  return `#compdef agent-registry
# agent-registry completion for zsh: source <(agent-registry completion zsh)
_agent_registry() {
  local key="" nested=" ${nested.join(' ')} "
  local -a cands
  if (( CURRENT == 2 )); then
    cands=(${candidates(root).get('')?.join(' ') ?? ''})
  else
    key="$words[2]"
    if [[ "$nested" == *" $key "* ]] && (( CURRENT > 3 )); then key="$key $words[3]"; fi
    case "$key" in
${cases}
    esac
  fi
  compadd -- $cands
}
compdef _agent_registry agent-registry
`;
}

function fish(root: CompletionNode): string {
  const lines = ['# agent-registry completion for fish: agent-registry completion fish | source'];
  const top = root.subcommands.map((sub) => sub.name).join(' ');
  for (const command of root.subcommands) {
    lines.push(
      `complete -c agent-registry -f -n "not __fish_seen_subcommand_from ${top}" -a ${command.name} -d '${command.description}'`,
    );
    for (const sub of command.subcommands)
      lines.push(
        `complete -c agent-registry -f -n "__fish_seen_subcommand_from ${command.name}" -a ${sub.name} -d '${sub.description}'`,
      );
    for (const option of command.options.filter((o) => o.startsWith('--')))
      lines.push(
        `complete -c agent-registry -n "__fish_seen_subcommand_from ${command.name}" -l ${option.slice(2)}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

const SHELLS = { bash, zsh, fish } as const;

export function registerCompletion(program: Command): void {
  const command = program
    .command('completion')
    .description('Print a shell completion script for bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      if (!(shell in SHELLS))
        throw new UsageError(`unknown shell "${shell}"; use bash, zsh or fish`, 'UNKNOWN_SHELL');
      // --version belongs to the program alone; --registry and --json work after any command.
      const global = program.options
        .filter((option) => option.long !== '--version')
        .flatMap((option) => [option.long, option.short])
        .filter(isWord);
      const root = nodeOf(program, global);
      process.stdout.write(SHELLS[shell as keyof typeof SHELLS](root));
    });
  withExamples(
    command,
    'source <(agent-registry completion bash)   # in ~/.bashrc',
    'source <(agent-registry completion zsh)    # in ~/.zshrc, after compinit',
    'agent-registry completion fish > ~/.config/fish/completions/agent-registry.fish',
  );
}
