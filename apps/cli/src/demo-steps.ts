import type { ToolCall, ToolResponse } from '@quiver/core';
import { responseText } from '@quiver/core';
import type { Toolkit } from '@quiver/core-registry';

/** What a demo step gets. */
export interface DemoStepContext {
  toolkit: Toolkit;
  /** Print one line under the step's title. */
  log: (line: string) => void;
}

/** One step of `quiver demo`: returns whether it worked (it may also throw). */
export interface DemoStep {
  title: string;
  run: (context: DemoStepContext) => Promise<boolean>;
}

let callNumber = 0;
function call(name: string, args: string): ToolCall {
  callNumber += 1;
  return { id: `demo-${callNumber}`, name, arguments: args };
}

function firstLine(response: ToolResponse): string {
  return responseText(response).split('\n')[0] ?? '';
}

/** The steps of the demo, in order. */
export const defaultDemoSteps: DemoStep[] = [
  {
    title: 'Tool registry: the registered tools and their provider schemas',
    async run({ toolkit, log }) {
      const tools = toolkit.list();
      for (const tool of tools)
        log(
          `${tool.name} — ${typeof tool.description === 'string' ? tool.description : tool.description.en}`,
        );
      const counts = (['openai', 'openai-strict', 'anthropic', 'gemini'] as const).map(
        (target) => `${target}: ${toolkit.getJsonSchemas({ target }).length}`,
      );
      log(`schemas emitted per provider — ${counts.join(', ')}`);
      return tools.length > 0;
    },
  },
  {
    title: 'Call a tool through the registry: calculator "(2 + 3) * 4 ^ 2"',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('calculator', '{"expression": "(2 + 3) * 4 ^ 2"}'),
      );
      log(`→ ${firstLine(response)}`);
      return !response.isError && Number(responseText(response)) === (2 + 3) * 4 ** 2;
    },
  },
  {
    title: 'Lenient arguments: single quotes and a trailing comma are read, not rejected',
    async run({ toolkit, log }) {
      const raw = "{'expression': 'sqrt(16) + 1',}";
      const response = await toolkit.callToCompletion(call('calculator', raw));
      log(`${raw} → ${firstLine(response)}`);
      return !response.isError && Number(responseText(response)) === Math.sqrt(16) + 1;
    },
  },
  {
    title: 'Validation error reported to the model (wrong field name and type)',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(call('calculator', '{"expr": 42}'));
      for (const line of responseText(response).split('\n')) log(line);
      const error = response.metadata?.error;
      return response.isError === true && error?.code === 'tool_argument_invalid';
    },
  },
  {
    title: 'Unknown tool reported with the list of available tools',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('weather_forecast', '{"city": "Paris"}'),
      );
      log(firstLine(response));
      return response.isError === true && response.metadata?.error?.code === 'tool_not_found';
    },
  },
  {
    title: 'Streaming: countdown yields its output chunk by chunk',
    async run({ toolkit, log }) {
      let chunks = 0;
      let last: ToolResponse | undefined;
      for await (const chunk of toolkit.call(call('countdown', '{"from": 3, "intervalMs": 50}'))) {
        chunks += 1;
        last = chunk;
        const text = responseText(chunk).trim();
        if (text) log(`chunk ${chunks}: ${text}`);
      }
      return chunks >= 4 && last?.isLast === true && !last.isError;
    },
  },
  {
    title: 'Timeout: a call that outlives its limit is stopped and reported',
    async run({ toolkit, log }) {
      const slow = toolkit.get('countdown');
      if (!slow) return false;
      const limited = toolkit.register(slow.tool, { name: 'countdown_limited', timeoutMs: 120 });
      const response = await toolkit.callToCompletion(
        call(limited!.name, '{"from": 50, "intervalMs": 100}'),
      );
      log(responseText(response).trim().split('\n').at(-1) ?? '');
      toolkit.unregister(limited!.name);
      return response.isError === true && response.metadata?.error?.code === 'tool_timeout';
    },
  },
  {
    title: 'Current time in Shanghai',
    async run({ toolkit, log }) {
      const response = await toolkit.callToCompletion(
        call('current_time', '{"timezone": "Asia/Shanghai"}'),
      );
      log(firstLine(response));
      return !response.isError;
    },
  },
];
