import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { responseText } from '@quiver/core';
import { SkillError, Toolkit, loadSkill, registerSkill } from '../src/index.js';

const skills = join(__dirname, 'fixtures', 'skills');

describe('agent skills', () => {
  it('loads a skill folder: front matter, instructions and tool modules', async () => {
    const skill = await loadSkill(join(skills, 'chart-helper'));
    expect(skill.name).toBe('chart-helper');
    expect(skill.description).toMatch(/text bar chart/);
    expect(skill.instructions).toMatch(/call `text_bar_chart`/);
    expect(skill.tools.map((tool) => tool.name)).toEqual(['text_bar_chart']);
  });

  it('lists the skill by name and description, and loads instructions and tools only on activation', async () => {
    const toolkit = new Toolkit();
    await registerSkill(toolkit, join(skills, 'chart-helper'));
    const before = toolkit.getJsonSchemas().map((tool) => tool.function);
    expect(before.map((tool) => tool.name)).toEqual(['reset_equipped_tools']);
    const meta = before[0]!.parameters as { properties: Record<string, { description: string }> };
    expect(meta.properties['chart-helper']!.description).toMatch(/text bar chart/);
    expect(JSON.stringify(before)).not.toMatch(/call `text_bar_chart`/);

    const inactive = await toolkit.callToCompletion({
      id: '1',
      name: 'text_bar_chart',
      arguments: '{"values":[1]}',
    });
    expect(inactive.isError).toBe(true);

    const activation = await toolkit.callToCompletion({
      id: '2',
      name: 'reset_equipped_tools',
      arguments: '{"chart-helper": true}',
    });
    expect(responseText(activation)).toMatch(/call `text_bar_chart`/);
    expect(toolkit.getJsonSchemas().map((tool) => tool.function.name)).toContain('text_bar_chart');
    const chart = await toolkit.callToCompletion({
      id: '3',
      name: 'text_bar_chart',
      arguments: '{"values":[2,3]}',
    });
    expect(responseText(chart)).toBe('##\n###');
  });

  it.each([
    ['no-front-matter', /SKILL\.md.*front matter/s],
    ['missing-name', /field "name"/],
    ['bad-yaml', /not valid YAML/],
    ['bad-module', /nothing\.cjs.*exports no tool/s],
    ['empty-dir', /SKILL\.md.*missing/s],
    ['does-not-exist', /does not exist/],
  ])(
    'rejects the invalid skill folder %s with a message naming the file and field',
    async (folder, message) => {
      const error = await loadSkill(join(skills, folder)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SkillError);
      expect((error as SkillError).message).toMatch(message);
      expect((error as SkillError).code).toBe('skill_invalid');
    },
  );

  it('leaves the toolkit unchanged when a skill cannot be registered', async () => {
    const toolkit = new Toolkit();
    await expect(registerSkill(toolkit, join(skills, 'bad-module'))).rejects.toBeInstanceOf(
      SkillError,
    );
    expect(toolkit.groups().map((group) => group.name)).toEqual(['basic']);
  });
});

describe('Toolkit#registerSkill', () => {
  it('registers a skill folder through the toolkit', async () => {
    const toolkit = new Toolkit();
    const skill = await toolkit.registerSkill(join(skills, 'chart-helper'));
    expect(skill.name).toBe('chart-helper');
    expect(toolkit.groups().map((group) => group.name)).toContain('chart-helper');
  });
});
