import { libraryBuild } from '@quiver/build-config';

export default libraryBuild();
