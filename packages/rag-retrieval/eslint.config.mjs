export { default } from '@quiver/eslint-config';
