import teardown from '../../support/global-teardown';

export default teardown;
