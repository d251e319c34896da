import { libraryBuild } from '@quiver/build-config';

// Two entry points: the web tools, and the weather tool shipped as its own subpath
// (`@quiver/search-tools/weather`) the way a contributed tool would be.
export default libraryBuild({ entry: { index: 'src/index.ts', weather: 'src/weather/index.ts' } });
