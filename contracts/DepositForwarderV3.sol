// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20Minimal, ITokenMessengerV2} from "./DepositForwarderV2.sol";

/// @notice The code behind every version-3 deposit address: an EIP-1167 clone of this contract
/// deployed by `DepositFactoryV3` with CREATE2. As in version 2, the factory has already checked
/// that what it passes is what the clone's salt commits to, so the forwarder only trusts its
/// caller. Unlike version 2, a fee that cannot be paid never stops the payout.
contract DepositForwarderV3 {
    /// Gas the fee transfer is given, and never less: a USDC transfer (FiatTokenV2_2 behind its
    /// proxy, to a fresh recipient, every slot cold) takes under 40,000 on the EVM's gas schedule.
    uint256 public constant FEE_GAS = 100_000;
    /// Below this much gas left, the fee call could not be given FEE_GAS whole (a call passes on at
    /// most 63/64 of what is left, after the few hundred gas of setting it up).
    uint256 private constant FEE_GAS_NEEDED = FEE_GAS + FEE_GAS / 63 + 1_000;

    /// The factory that deployed this implementation; the only caller it obeys. Immutable, so it
    /// lives in the code and every clone (which delegates here) sees the same value.
    address public immutable FACTORY;

    error NotFactory();
    /// An ERC-20 call (transfer, approve) reverted or returned false. `reason` is the token's revert data.
    error TokenTransferFailed(address token, address to, uint256 amount, bytes reason);
    error NativeTransferFailed(address to, uint256 amount, bytes reason);
    /// The caller left too little gas for the fee transfer to run with FEE_GAS: the settlement
    /// reverts rather than skip a fee that might have gone through.
    error FeeGasTooLow(uint256 gasLeft, uint256 needed);

    constructor() {
        FACTORY = msg.sender;
    }

    modifier onlyFactory() {
        if (msg.sender != FACTORY) revert NotFactory();
        _;
    }

    receive() external payable {}

    /// Sends the whole `token` balance: floor(balance * feeBps / 10000) to `feeRecipient`, the
    /// rest to `payout`. When the fee transfer fails (USDC's blocklist holds the fee recipient,
    /// say), the fee goes to `payout` too: `fee` is what was paid, `skipped` what was not. Zero
    /// amounts are not transferred (some tokens revert on them).
    function forward(address token, address payout, address feeRecipient, uint16 feeBps)
        external
        onlyFactory
        returns (uint256 amount, uint256 fee, uint256 skipped)
    {
        amount = balanceOf(token);
        fee = (amount * feeBps) / 10000;
        if (fee > 0 && !_tryTransfer(token, feeRecipient, fee)) (fee, skipped) = (0, fee);
        if (amount > fee) {
            _call(token, abi.encodeCall(IERC20Minimal.transfer, (payout, amount - fee)), payout, amount - fee);
        }
    }

    /// Sends the whole balance of `token` to `payout`, without fee.
    function sweep(address token, address payout) external onlyFactory returns (uint256 amount) {
        amount = balanceOf(token);
        if (amount > 0) _call(token, abi.encodeCall(IERC20Minimal.transfer, (payout, amount)), payout, amount);
    }

    /// Sends the whole native-coin balance to `payout`.
    function sweepNative(address payout) external onlyFactory returns (uint256 amount) {
        amount = address(this).balance;
        if (amount > 0) {
            (bool ok, bytes memory reason) = payout.call{value: amount}("");
            if (!ok) revert NativeTransferFailed(payout, amount, reason);
        }
    }

    /// Burns `amount` of `burnToken` through `messenger` (CCTP V2's TokenMessengerV2), minting to
    /// `mintRecipient` on `destinationDomain`, with no destination caller and no hook.
    function burn(
        address messenger,
        address burnToken,
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external onlyFactory {
        _call(burnToken, abi.encodeCall(IERC20Minimal.approve, (messenger, amount)), messenger, amount);
        ITokenMessengerV2(messenger).depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, bytes32(0), maxFee, minFinalityThreshold
        );
    }

    function balanceOf(address token) public view returns (uint256) {
        return IERC20Minimal(token).balanceOf(address(this));
    }

    /// Whether `token.transfer(to, amount)`, run with exactly FEE_GAS, succeeded as `_call` counts
    /// success. Whoever calls `settle` chooses the gas: without the check, just too little would
    /// make the transfer run out and the fee be skipped on purpose. Only the first word of what
    /// the token returns is read, so no answer can cost the settlement more gas than that.
    function _tryTransfer(address token, address to, uint256 amount) private returns (bool ok) {
        bytes memory data = abi.encodeCall(IERC20Minimal.transfer, (to, amount));
        if (gasleft() < FEE_GAS_NEEDED) revert FeeGasTooLow(gasleft(), FEE_GAS_NEEDED);
        uint256 size;
        uint256 word;
        assembly ("memory-safe") {
            ok := call(FEE_GAS, token, 0, add(data, 0x20), mload(data), 0, 0)
            size := returndatasize()
            if gt(size, 0x1f) {
                returndatacopy(0, 0, 0x20)
                word := mload(0)
            }
        }
        if (!ok) return false;
        // No return value is only acceptable from a contract: a call to an empty account succeeds too.
        return size == 0 ? token.code.length > 0 : size >= 32 && word == 1;
    }

    /// Accepts tokens that return true and tokens that return nothing (USDT-style); anything
    /// else, including a revert (USDC on a blacklisted recipient), reverts the whole call.
    function _call(address token, bytes memory data, address to, uint256 amount) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (ok) {
            if (ret.length == 0) {
                // No return value is only acceptable from a contract: a call to an empty account succeeds too.
                if (token.code.length > 0) return;
            } else if (ret.length >= 32 && abi.decode(ret, (uint256)) == 1) {
                return;
            }
        }
        revert TokenTransferFailed(token, to, amount, ret);
    }
}
