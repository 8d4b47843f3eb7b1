// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DepositForwarder} from "./DepositForwarder.sol";

/// @notice Deterministic, non-custodial deposit addresses. A deposit address is the CREATE2
/// address of an EIP-1167 clone of `DepositForwarder` whose salt commits to the payment id, the
/// token, the payout address, the fee recipient and the fee; funds at that address can only ever
/// go to those recipients in those proportions, whoever calls `settle`.
///
/// Deployed once per chain through the deterministic deployment proxy with no constructor
/// arguments, so it has the same address on every chain.
contract DepositFactory {
    /// The forwarder implementation every clone delegates to (this contract's first CREATE).
    DepositForwarder public immutable IMPLEMENTATION;
    /// keccak256 of the clone's init code, for computing deposit addresses.
    bytes32 private immutable CLONE_CODE_HASH;

    event Settled(
        bytes32 indexed paymentId,
        address indexed depositAddress,
        address token,
        address payout,
        uint256 amount,
        uint256 fee
    );
    event Recovered(
        bytes32 indexed paymentId, address indexed depositAddress, address token, address payout, uint256 amount
    );

    error FeeTooHigh(uint16 feeBps);
    error MissingFeeRecipient();
    error MissingPayout();
    /// `recover` cannot take the committed token: it goes through `settle`, with its fee.
    error CommittedToken();
    error DeployFailed();

    constructor() {
        IMPLEMENTATION = new DepositForwarder();
        CLONE_CODE_HASH = keccak256(_cloneCode());
    }

    function salt(bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps)
        public
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(paymentId, token, payout, feeRecipient, feeBps));
    }

    function depositAddress(bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps)
        public
        view
        returns (address)
    {
        bytes32 s = salt(paymentId, token, payout, feeRecipient, feeBps);
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), s, CLONE_CODE_HASH)))));
    }

    /// Forwards the whole `token` balance of the deposit address (deploying it first if needed):
    /// the fee to `feeRecipient`, the rest to `payout`. Callable by anyone.
    function settle(bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps)
        external
        returns (address deposit, uint256 amount, uint256 fee)
    {
        deposit = _deploy(paymentId, token, payout, feeRecipient, feeBps);
        (amount, fee) = DepositForwarder(payable(deposit)).forward(token, payout, feeRecipient, feeBps);
        emit Settled(paymentId, deposit, token, payout, amount, fee);
    }

    /// Sends the whole balance of `otherToken` (native coin when it is address(0)) at the deposit
    /// address to `payout`, without fee: recovery of whatever was sent there by mistake.
    function recover(
        bytes32 paymentId,
        address token,
        address payout,
        address feeRecipient,
        uint16 feeBps,
        address otherToken
    ) external returns (uint256 amount) {
        if (otherToken == token) revert CommittedToken();
        address deposit = _deploy(paymentId, token, payout, feeRecipient, feeBps);
        amount = otherToken == address(0)
            ? DepositForwarder(payable(deposit)).sweepNative(payout)
            : DepositForwarder(payable(deposit)).sweep(otherToken, payout);
        emit Recovered(paymentId, deposit, otherToken, payout, amount);
    }

    /// Returns the deposit address for the parameters, deploying its clone if it has no code yet.
    function _deploy(bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps)
        private
        returns (address deposit)
    {
        if (feeBps > 10000) revert FeeTooHigh(feeBps);
        if (feeBps > 0 && feeRecipient == address(0)) revert MissingFeeRecipient();
        if (payout == address(0)) revert MissingPayout();
        deposit = depositAddress(paymentId, token, payout, feeRecipient, feeBps);
        if (deposit.code.length > 0) return deposit;
        bytes memory code = _cloneCode();
        bytes32 s = salt(paymentId, token, payout, feeRecipient, feeBps);
        address created;
        assembly ("memory-safe") {
            created := create2(0, add(code, 0x20), mload(code), s)
        }
        if (created != deposit) revert DeployFailed();
    }

    /// EIP-1167 minimal proxy init code delegating to IMPLEMENTATION.
    function _cloneCode() private view returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73", address(IMPLEMENTATION), hex"5af43d82803e903d91602b57fd5bf3"
        );
    }
}
