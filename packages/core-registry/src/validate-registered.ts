import type { ValidationResult } from './tool-schema.js';
import { nullsToAbsent } from './tool-schema.js';
import type { RegisteredTool } from './toolkit-types.js';

/**
 * @internal The arguments a registered tool runs with: the model's arguments with the preset ones
 * injected and `null` mapped back to absent (strict provider schemas), validated against the
 * tool's schema. The one place that prepares arguments, for every call path.
 */
export function validateRegistered(
  registered: RegisteredTool,
  args: Record<string, unknown>,
): ValidationResult {
  const withPresets =
    registered.presetArgs !== undefined ? { ...args, ...registered.presetArgs } : args;
  return registered.tool.validate(nullsToAbsent(withPresets, registered.tool.parameters));
}
