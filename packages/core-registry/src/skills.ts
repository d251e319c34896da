import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { QuiverError, TOOL_NAME_PATTERN } from '@quiver/core';
import type { AnyTool } from './define-tool.js';
import { isTool } from './define-tool.js';
import type { Toolkit } from './toolkit.js';

/** A skill folder that cannot be used; `file` and `field` say where the problem is. */
export class SkillError extends QuiverError {
  readonly file: string;
  readonly field: string | undefined;

  constructor(file: string, message: string, options?: { field?: string; cause?: unknown }) {
    super(
      'skill_invalid',
      `${file}${options?.field ? ` (field "${options.field}")` : ''}: ${message}`,
      options,
    );
    this.file = file;
    this.field = options?.field;
  }
}

/** An agent skill: instructions and optional tools, loaded into context only when activated. */
export interface Skill {
  name: string;
  description: string;
  /** The body of SKILL.md: what the model reads when it activates the skill. */
  instructions: string;
  dir: string;
  tools: AnyTool[];
}

const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs']);

/** Load a module the way Node would; kept in a function so bundlers leave `import()` alone. */
const importModule = new Function('specifier', 'return import(specifier)') as (
  specifier: string,
) => Promise<Record<string, unknown>>;

async function loadToolModule(file: string): Promise<AnyTool[]> {
  let module: Record<string, unknown>;
  try {
    // CommonJS modules load with require where it exists (also under test runners without ESM).
    module =
      extname(file) === '.cjs' && typeof require === 'function'
        ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS tool modules, see above
          (require(file) as Record<string, unknown>)
        : await importModule(pathToFileURL(file).href);
  } catch (error) {
    throw new SkillError(file, `the tool module could not be loaded: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (isTool(module)) return [module];
  const exported = Object.values(module).flatMap((value) =>
    Array.isArray(value) ? value : [value],
  );
  const defaults = module.default;
  const candidates = [
    ...(Array.isArray(defaults) ? defaults : defaults !== undefined ? [defaults] : []),
    ...exported,
  ];
  const tools = [...new Set(candidates.filter(isTool))];
  if (tools.length === 0)
    throw new SkillError(file, 'the module exports no tool made with defineTool.');
  return tools;
}

/**
 * Read a skill folder: `SKILL.md` with front matter (`name`, `description`, optional `tools`: a
 * list of module paths) and a body of instructions, plus tool modules (`.js`, `.mjs`, `.cjs`)
 * listed in `tools` or found in a `tools/` sub-folder.
 * @throws SkillError naming the file and the field that is wrong
 */
export async function loadSkill(dir: string): Promise<Skill> {
  const folder = resolve(dir);
  const skillFile = join(folder, 'SKILL.md');
  try {
    if (!(await stat(folder)).isDirectory()) throw new SkillError(folder, 'is not a folder.');
  } catch (error) {
    if (error instanceof SkillError) throw error;
    throw new SkillError(folder, 'the skill folder does not exist.', { cause: error });
  }
  let text: string;
  try {
    text = await readFile(skillFile, 'utf8');
  } catch (error) {
    throw new SkillError(
      skillFile,
      'missing: a skill folder needs a SKILL.md with front matter (name, description) and instructions.',
      { cause: error },
    );
  }
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) {
    throw new SkillError(
      skillFile,
      'must start with front matter between "---" lines, e.g.\n---\nname: my-skill\ndescription: What it is for\n---',
    );
  }
  let front: unknown;
  try {
    front = parseYaml(match[1]!);
  } catch (error) {
    throw new SkillError(
      skillFile,
      `the front matter is not valid YAML: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (typeof front !== 'object' || front === null || Array.isArray(front)) {
    throw new SkillError(
      skillFile,
      'the front matter must be a mapping with name and description.',
    );
  }
  const fields = front as Record<string, unknown>;
  const name = fields.name;
  if (typeof name !== 'string' || name.trim() === '')
    throw new SkillError(skillFile, 'is required: a short name.', { field: 'name' });
  if (!TOOL_NAME_PATTERN.test(name)) {
    throw new SkillError(
      skillFile,
      `"${name}" is not a valid name: use 1 to 64 letters, digits, "_" or "-".`,
      { field: 'name' },
    );
  }
  const description = fields.description;
  if (typeof description !== 'string' || description.trim() === '') {
    throw new SkillError(skillFile, 'is required: one sentence saying when to use the skill.', {
      field: 'description',
    });
  }
  let modules: string[] = [];
  if (fields.tools !== undefined) {
    if (!Array.isArray(fields.tools) || !fields.tools.every((item) => typeof item === 'string')) {
      throw new SkillError(
        skillFile,
        'must be a list of module paths relative to the skill folder.',
        { field: 'tools' },
      );
    }
    modules = (fields.tools as string[]).map((path) => resolve(folder, path));
    for (const module of modules) {
      if (!module.startsWith(folder))
        throw new SkillError(skillFile, `"${module}" is outside the skill folder.`, {
          field: 'tools',
        });
    }
  } else {
    try {
      modules = (await readdir(join(folder, 'tools')))
        .filter((file) => MODULE_EXTENSIONS.has(extname(file)))
        .sort()
        .map((file) => join(folder, 'tools', file));
    } catch {
      modules = [];
    }
  }
  const tools: AnyTool[] = [];
  for (const module of modules) tools.push(...(await loadToolModule(module)));
  return {
    name,
    description: description.trim(),
    instructions: match[2]!.trim(),
    dir: folder,
    tools,
  };
}

/**
 * Register a skill in a toolkit: it becomes a tool group named after the skill, listed to the model
 * by name and description through the `reset_equipped_tools` meta tool (enabled here); its
 * instructions (the group's notes) and its tools reach the model only when it activates it.
 * @returns the loaded skill
 * @throws SkillError for an invalid skill folder; ToolRegistrationError when the name is taken
 */
export async function registerSkill(toolkit: Toolkit, dirOrSkill: string | Skill): Promise<Skill> {
  const skill = typeof dirOrSkill === 'string' ? await loadSkill(dirOrSkill) : dirOrSkill;
  toolkit.createGroup({
    name: skill.name,
    description: `Skill: ${skill.description}`,
    notes: `${skill.instructions}\n\n(The skill's files are in ${skill.dir}.)`,
    active: false,
  });
  try {
    for (const tool of skill.tools) toolkit.register(tool, { group: skill.name });
  } catch (error) {
    toolkit.removeGroup(skill.name);
    throw error;
  }
  toolkit.enableMetaTool();
  return skill;
}
