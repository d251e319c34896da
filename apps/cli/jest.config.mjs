import { createJestConfig } from '@quiver/jest-config';

export default createJestConfig({ displayName: '@quiver/cli', testTimeout: 60_000 });
