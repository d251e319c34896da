import { createJestConfig } from '@quiver/jest-config';

export default createJestConfig({
  displayName: '@quiver/core-registry',
  // Skill tool modules in test/fixtures require the package by name, as a user's module would.
  moduleNameMapper: { '^@quiver/core-registry$': '<rootDir>/src/index.ts' },
});
