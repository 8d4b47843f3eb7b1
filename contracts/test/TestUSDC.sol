// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestToken} from "./TestToken.sol";

/// @notice Test-only stand-in for USDC: 6 decimals, free minting, a blocklist.
contract TestUSDC is TestToken("USD Coin", "USDC", 6, false) {}
