import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { AgentEvent, AgentRun, RunResult } from '@quiver/agent-loop';
import { Assistant, OpenAIChatModel } from '@quiver/agent-loop';
import type { ChatMessage } from '@quiver/core';
import { responseText } from '@quiver/core';
import type { QuiverConfig } from '../config.js';
import { missingModelReason } from '../config.js';
import type { CliIO } from '../io.js';
import { ExitCode, styles } from '../io.js';
import type { CommandEnvironment } from './tools.js';
import { connectConfiguredMcpServers } from '../configured-mcp.js';

interface ChatOptions {
  message?: string;
  file: string[];
  yes?: boolean;
  json?: boolean;
}

/** The configured OpenAI-compatible model. */
export function createChatModel(config: QuiverConfig): OpenAIChatModel {
  return new OpenAIChatModel({
    ...(config.model.baseUrl ? { baseURL: config.model.baseUrl } : {}),
    ...(config.model.apiKey ? { apiKey: config.model.apiKey } : {}),
    ...(config.model.model ? { model: config.model.model } : {}),
    ...(config.model.contextWindow ? { contextWindow: config.model.contextWindow } : {}),
    ...(config.model.temperature !== undefined ? { temperature: config.model.temperature } : {}),
    env: {},
  });
}

/**
 * `quiver chat`: talk to the Assistant with the built-in tools, streaming its answer and showing
 * each tool call and result. Interactive by default (one question per line, `/exit` or end of
 * input to stop); `--message` asks one question and exits. Tool calls that need approval are
 * asked about on the terminal (`--yes` approves them).
 */
export function registerChatCommand(program: Command, environment: CommandEnvironment): void {
  program
    .command('chat')
    .description('Chat with the Assistant and the built-in tools (needs a model endpoint)')
    .option('-m, --message <text>', 'ask one question and exit')
    .option(
      '-f, --file <path>',
      'a document the Assistant answers from (repeatable)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('-y, --yes', 'approve every tool call that asks for approval')
    .option('--json', 'print the agent events as JSON lines')
    .action(async (options: ChatOptions) => {
      const { io } = environment;
      const config = environment.config();
      const missing = missingModelReason(config);
      if (missing) {
        io.stderr(`quiver: ${missing}\n`);
        environment.setExitCode(ExitCode.usage);
        return;
      }
      // Before any process starts: a model that cannot be built is a configuration error (exit 2).
      const model = createChatModel(config);
      const toolkit = await environment.createToolkit();
      try {
        await connectConfiguredMcpServers(toolkit, config, io);
      } catch (error) {
        await toolkit.close();
        throw error;
      }
      const assistant = new Assistant({
        name: 'quiver',
        model,
        toolkit,
        files: options.file,
      });
      const input = createInterface({
        input: io.stdin ?? process.stdin,
        terminal: false,
      })[Symbol.asyncIterator]();
      const ask = async (prompt: string): Promise<string | undefined> => {
        if (io.stdinIsTTY) io.stdout(prompt);
        const next = await input.next();
        return next.done ? undefined : next.value;
      };
      const history: ChatMessage[] = [];
      let failed = false;
      try {
        for (;;) {
          const question = options.message ?? (await ask(styles(io).cyan('you › ')));
          if (question === undefined || question.trim() === '/exit') break;
          if (question.trim() === '') continue;
          history.push({ role: 'user', content: question });
          let run: AgentRun<ChatMessage> = assistant.run(history);
          for (;;) {
            const result = await show(run, io, options.json === true);
            if (result.status === 'needs-approval' && result.state) {
              for (const pending of result.pendingApprovals) {
                const answer = options.yes
                  ? 'y'
                  : await ask(`Run ${pending.toolName}(${pending.arguments})? [y/N] `);
                if (answer?.trim().toLowerCase().startsWith('y'))
                  result.state.approve(pending.callId);
                else result.state.reject(pending.callId);
              }
              run = assistant.resume(result.state);
              continue;
            }
            history.push(...result.messages);
            break;
          }
          if (options.message !== undefined) break;
        }
      } catch (error) {
        failed = true;
        throw error;
      } finally {
        await toolkit.close();
        if (!failed) environment.setExitCode(ExitCode.ok);
      }
    });
}

/** Print a run's events as they come; returns the result. */
async function show(run: AgentRun<ChatMessage>, io: CliIO, json: boolean): Promise<RunResult> {
  const style = styles(io);
  const events = run.events();
  let midLine = false;
  for (;;) {
    const next = await events.next();
    if (next.done) {
      if (midLine) io.stdout('\n');
      return next.value;
    }
    const event: AgentEvent = next.value;
    if (json) {
      io.stdout(`${JSON.stringify(event)}\n`);
      continue;
    }
    if (event.type === 'model-delta' && event.delta.type === 'text-delta') {
      io.stdout(event.delta.text);
      midLine = !event.delta.text.endsWith('\n');
    } else if (event.type === 'tool-start') {
      if (midLine) io.stdout('\n');
      midLine = false;
      io.stdout(style.dim(`⚙ ${event.name}(${event.arguments})\n`));
    } else if (event.type === 'tool-end') {
      const text = responseText(event.response).trim().split('\n')[0] ?? '';
      io.stdout(
        `${event.response.isError ? style.red('✘') : style.green('✔')} ${event.name} → ${text.slice(0, 200)}\n`,
      );
    } else if (event.type === 'retrieval' && event.chunks.length > 0) {
      io.stdout(
        style.dim(
          `📚 ${event.chunks.length} passages from ${[...new Set(event.chunks.map((chunk) => chunk.source))].join(', ')}\n`,
        ),
      );
    }
  }
}
