export { connectivityCheck } from './connectivity-check.workflow.js';
