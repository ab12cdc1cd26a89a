// Jest globalSetup of the end-to-end project: dist/ up to date, then the migrated and seeded snapshot database.
'use strict';
const build = require('../../scripts/build');
const { buildSnapshot } = require('./snapshot');

module.exports = async function globalSetup() {
  build();
  await buildSnapshot();
};
