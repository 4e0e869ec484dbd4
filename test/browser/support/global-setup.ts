import setup from '../../support/global-setup';

/** The same migrated template database the jest suite clones, for this run. */
export default setup;
