export * from './profile-rules.js';
