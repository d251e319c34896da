import { Toolkit } from '@quiver/core-registry';
import { exampleTools } from '@quiver/core-registry/examples';
import type { Language } from '@quiver/core';

/** The toolkit the CLI offers: the example tools for now; later packages add theirs here. */
export function createBuiltinToolkit(options: { language?: Language } = {}): Toolkit {
  const toolkit = new Toolkit({ language: options.language ?? 'en' });
  for (const tool of exampleTools) toolkit.register(tool);
  return toolkit;
}
