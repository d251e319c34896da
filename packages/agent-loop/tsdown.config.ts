import { libraryBuild } from '@quiver/build-config';

export default libraryBuild({ entry: { index: 'src/index.ts', testing: 'src/testing.ts' } });
