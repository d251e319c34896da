import { libraryBuild } from '@quiver/build-config';

export default libraryBuild({
  entry: { index: 'src/index.ts' },
  // The web UI is plain files served as they are.
  copy: [{ from: 'src/web', to: 'dist' }],
});
