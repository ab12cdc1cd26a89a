// Jest globalSetup of the end-to-end project: dist/ up to date, then the migrated and seeded snapshot database.
'use strict';
const buildOnce = require('./build-once');
const { buildSnapshot } = require('./snapshot');

module.exports = async function globalSetup() {
  buildOnce();
  await buildSnapshot();
};
