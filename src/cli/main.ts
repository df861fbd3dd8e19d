#!/usr/bin/env node
/**
 * `flowgate`: the command line of the management API, runs, approvals, triggers and the tool
 * gateway. Exit codes: 0 success, 1 failure (run FAILED, HTTP error), 2 timeout (`plan`: changes pending), 64 usage error.
 */
import '../app/node-line';
import { Command, CommanderError } from 'commander';
import { configPath, writeFileConfig } from './config';
import { completionCommand } from './completion';
import { definitionCommands } from './definitions';
import { CliError, EXIT } from './errors';
import { agentCommands, apiKeyCommands, connectionCommands, serverCommands, triggerCommands, workflowCommands } from './resources';
import { approvalCommands } from './approvals';
import { auditCommand } from './audit';
import { callCommand, runCommands } from './runs';
import { scheduleCommands } from './schedules';
import { alertCommands } from './alerts';
import { toolCommands } from './tools';

/** Where the config file is, as help texts say it: the path in use now, and the rule. */
const CONFIG_FILE_HELP = `${configPath()} ($XDG_CONFIG_HOME/flowgate/config.json, else ~/.config/flowgate/config.json)`;

export function buildProgram(): Command {
  const program = new Command('flowgate')
    .description('operate and call a flowgate instance')
    .option('--url <url>', 'flowgate base URL (FLOWGATE_URL; default http://localhost:8080)')
    .option('--token <token>', 'admin token (FLOWGATE_TOKEN)')
    .option('--api-key <key>', 'API key for call and tools (FLOWGATE_API_KEY)')
    .option('--json', 'machine-readable JSON on stdout')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .addHelpText('after', `\nConfiguration: flags, else FLOWGATE_URL, FLOWGATE_TOKEN, FLOWGATE_API_KEY, else ${CONFIG_FILE_HELP}.`);

  program.command('login').description(`save the URL and admin token to ${CONFIG_FILE_HELP} (mode 0600)`)
    .option('--temporal-ui <url>', 'the Temporal Web UI base URL, for `runs open`')
    .option('--temporal-namespace <ns>', 'the Temporal namespace, for `runs open`')
    .action((_o, cmd: Command) => {
      // --url, --token and --api-key are the global flags, read here from the command line only.
      const o = cmd.optsWithGlobals<{ url?: string; token?: string; apiKey?: string; temporalUi?: string; temporalNamespace?: string }>();
      if (!o.url || !o.token) throw new CliError('login needs --url and --token', EXIT.USAGE);
      const file = writeFileConfig({
        url: o.url, token: o.token, ...(o.apiKey ? { apiKey: o.apiKey } : {}),
        ...(o.temporalUi ? { temporalUiUrl: o.temporalUi } : {}), ...(o.temporalNamespace ? { temporalNamespace: o.temporalNamespace } : {}),
      });
      process.stderr.write(`saved to ${file}\n`);
    });
  workflowCommands(program);
  triggerCommands(program);
  scheduleCommands(program);
  alertCommands(program);
  apiKeyCommands(program);
  connectionCommands(program);
  serverCommands(program);
  agentCommands(program);
  runCommands(program);
  approvalCommands(program);
  callCommand(program);
  toolCommands(program);
  auditCommand(program);
  definitionCommands(program);
  completionCommand(program);
  for (const command of program.commands) {
    command.exitOverride();
    for (const sub of command.commands) sub.exitOverride();
  }
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    if (err instanceof CliError) {
      console.error(`flowgate: ${err.message}`);
      return err.exitCode;
    }
    console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT.FAILURE;
  }
}

// main() answers every failure with an exit code; the catch is for a bug in that handling.
main(process.argv).then((code) => {
  process.exitCode = code;
}, (err: unknown) => {
  console.error(`flowgate: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = EXIT.FAILURE;
});
