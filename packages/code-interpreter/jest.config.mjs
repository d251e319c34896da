import { createJestConfig } from '@quiver/jest-config';

// Integration tests start real kernels; on a busy 2-core CI machine one test can take several
// seconds, so allow a minute per test (no test asserts on wall-clock time).
export default createJestConfig({ displayName: '@quiver/code-interpreter', testTimeout: 60_000 });
