/** `flowgate completion bash|zsh`: a script completing command groups and their subcommands. */
import type { Command } from 'commander';
import { CliError, EXIT } from './errors';

function tree(program: Command): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const group of program.commands) out[group.name()] = group.commands.map((c) => c.name());
  return out;
}

function bashScript(program: Command): string {
  const groups = tree(program);
  const cases = Object.entries(groups).filter(([, subs]) => subs.length > 0)
    .map(([g, subs]) => `    ${g}) COMPREPLY=($(compgen -W "${subs.join(' ')}" -- "$cur")) ;;`).join('\n');
  return `# flowgate bash completion: eval "$(flowgate completion bash)"
_flowgate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${Object.keys(groups).join(' ')}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _flowgate flowgate
`;
}

function zshScript(program: Command): string {
  return `#compdef flowgate
# flowgate zsh completion: eval "$(flowgate completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`;
}

export function completionCommand(program: Command): void {
  program.command('completion <shell>').description('print a completion script (bash or zsh)').action((shell: string) => {
    if (shell === 'bash') process.stdout.write(bashScript(program));
    else if (shell === 'zsh') process.stdout.write(zshScript(program));
    else throw new CliError(`no completion for ${shell}: bash or zsh`, EXIT.USAGE);
  });
}
