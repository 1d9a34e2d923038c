// The public entry point of @baton/dashboard.
export { dashboardRouter } from './dashboard-router.js';
