import { createJestConfig } from '@quiver/jest-config';

export default createJestConfig({ displayName: '@quiver/rag-retrieval' });
