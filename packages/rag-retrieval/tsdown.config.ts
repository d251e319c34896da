import { libraryBuild } from '@quiver/build-config';

export default libraryBuild({ entry: ['src/index.ts', 'src/testing.ts'] });
