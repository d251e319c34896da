import { createJestConfig } from '@quiver/jest-config';

export default createJestConfig({ displayName: '@quiver/server', testTimeout: 60_000 });
