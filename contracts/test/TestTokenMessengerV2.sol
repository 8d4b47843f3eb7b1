// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IMessageHandlerV2, TestMessageTransmitterV2} from "./TestMessageTransmitterV2.sol";

/// @notice The calls the messenger makes on the tokens: TestUSDC's `mint` is open to anyone.
interface IMintableToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function mint(address to, uint256 amount) external;
}

/// @notice Test-only stand-in for Circle's TokenMessengerV2 (and its TokenMinter), written from
/// the public interface: same `depositForBurn`, events, burn-message layout and revert strings
/// for the paths a relayer meets. It is deployed at the same address on every chain, so the
/// remote messenger it trusts is itself. Burning sends the tokens to a dead address (the test
/// tokens have no burn); minting uses the token's open `mint`.
contract TestTokenMessengerV2 is IMessageHandlerV2 {
    uint32 public constant MESSAGE_BODY_VERSION = 1;
    /// Unfinalized messages below this executed threshold are refused, as on real CCTP.
    uint32 public constant MIN_FINALITY_THRESHOLD = 1000;
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;

    TestMessageTransmitterV2 public immutable localMessageTransmitter;
    address public owner;
    /// Receives the fee of fast transfers, as the real messenger's `feeRecipient`.
    address public feeRecipient;
    /// keccak256(abi.encodePacked(remoteDomain, remoteToken)) => local token, as TokenMinter's.
    mapping(bytes32 => address) public remoteTokensToLocalTokens;
    /// Tokens linked to at least one remote token; only these can be burned.
    mapping(address => bool) public isBurnToken;

    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);
    event TokenPairLinked(address localToken, uint32 remoteDomain, bytes32 remoteToken);

    constructor(address localMessageTransmitter_) {
        localMessageTransmitter = TestMessageTransmitterV2(localMessageTransmitter_);
        owner = msg.sender;
        feeRecipient = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Caller is not the owner");
        _;
    }

    /// Burns of `remoteToken` on `remoteDomain` mint `localToken` here, and `localToken` may be burned.
    function linkTokenPair(address localToken, uint32 remoteDomain, bytes32 remoteToken) external onlyOwner {
        remoteTokensToLocalTokens[keccak256(abi.encodePacked(remoteDomain, remoteToken))] = localToken;
        isBurnToken[localToken] = true;
        emit TokenPairLinked(localToken, remoteDomain, remoteToken);
    }

    /// Circle's messenger keeps its minter separately (`localMinter`); here they are one contract.
    function localMinter() external view returns (address) {
        return address(this);
    }

    /// As Circle's TokenController: zero for a token that cannot be burned here.
    function burnLimitsPerMessage(address token) external view returns (uint256) {
        return isBurnToken[token] ? type(uint256).max : 0;
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        require(feeRecipient_ != address(0), "Zero address not allowed");
        feeRecipient = feeRecipient_;
    }

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _depositForBurn(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, "");
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        require(hookData.length > 0, "Hook data is empty");
        _depositForBurn(amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, hookData);
    }

    function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        returns (bool)
    {
        return _handleReceive(remoteDomain, sender, messageBody);
    }

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool) {
        require(finalityThresholdExecuted >= MIN_FINALITY_THRESHOLD, "Unsupported finality threshold");
        return _handleReceive(remoteDomain, sender, messageBody);
    }

    /// Body: version(4) burnToken(32) mintRecipient(32) amount(32) messageSender(32) maxFee(32)
    /// feeExecuted(32) expirationBlock(32) hookData; fee and expiry are zero until attested.
    function _depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes memory hookData
    ) private {
        require(amount > 0, "Amount must be nonzero");
        require(mintRecipient != bytes32(0), "Mint recipient must be nonzero");
        require(maxFee < amount, "Max fee must be less than amount");
        require(isBurnToken[burnToken], "Burn token not supported");
        require(IMintableToken(burnToken).transferFrom(msg.sender, BURN_ADDRESS, amount), "Transfer operation failed");

        bytes32 self = bytes32(uint256(uint160(address(this))));
        bytes memory body = abi.encodePacked(
            MESSAGE_BODY_VERSION,
            bytes32(uint256(uint160(burnToken))),
            mintRecipient,
            amount,
            bytes32(uint256(uint160(msg.sender))),
            maxFee,
            uint256(0), // feeExecuted
            uint256(0), // expirationBlock
            hookData
        );
        // The destination messenger is this same address on the other chain.
        localMessageTransmitter.sendMessage(destinationDomain, self, destinationCaller, minFinalityThreshold, body);
        emit DepositForBurn(
            burnToken, amount, msg.sender, mintRecipient, destinationDomain, self, destinationCaller, maxFee,
            minFinalityThreshold, hookData
        );
    }

    function _handleReceive(uint32 remoteDomain, bytes32 sender, bytes calldata body) private returns (bool) {
        require(msg.sender == address(localMessageTransmitter), "Invalid message transmitter");
        require(sender == bytes32(uint256(uint160(address(this)))), "Remote TokenMessenger unsupported");
        require(body.length >= 228, "Invalid burn message");
        require(uint32(bytes4(body[0:4])) == MESSAGE_BODY_VERSION, "Invalid message body version");
        uint256 expirationBlock = uint256(bytes32(body[196:228]));
        require(expirationBlock == 0 || expirationBlock > block.number, "Message expired and must be re-signed");

        address token = remoteTokensToLocalTokens[keccak256(abi.encodePacked(remoteDomain, bytes32(body[4:36])))];
        require(token != address(0), "Mint token not supported");
        _mint(token, body);
        return true;
    }

    /// Mints amount - feeExecuted to the recipient and the fee to `feeRecipient`.
    function _mint(address token, bytes calldata body) private {
        address recipient = address(uint160(uint256(bytes32(body[36:68]))));
        uint256 amount = uint256(bytes32(body[68:100]));
        uint256 maxFee = uint256(bytes32(body[132:164]));
        uint256 fee = uint256(bytes32(body[164:196]));
        require(fee <= maxFee, "Fee exceeds max fee");
        require(fee < amount, "Fee equals or exceeds amount");
        IMintableToken(token).mint(recipient, amount - fee);
        if (fee > 0) IMintableToken(token).mint(feeRecipient, fee);
        emit MintAndWithdraw(recipient, amount - fee, token, fee);
    }
}
