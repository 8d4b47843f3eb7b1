// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IMessageHandlerV2, TestMessageTransmitterV2} from "./TestMessageTransmitterV2.sol";

/// @notice The calls the messenger makes on the tokens: TestUSDC's `mint` is open to anyone.
interface IMintableToken {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function mint(address to, uint256 amount) external;
}

/// @notice Test-only stand-in for Circle's TokenMessengerV2 (V2.1) and its TokenMinterV2, written
/// from the public interface and checked against Circle's sources: same `depositForBurn`, events,
/// burn-message layout, checks in the same order and revert strings for the paths a relayer or a
/// deposit address meets: remote messengers per domain, per-message burn limits, the minimum fee,
/// the 500 finality floor for unfinalized messages. Left out: upgradeability, pausing, the
/// denylist and roles beyond one owner. It is deployed at the same address on every chain, so the
/// remote messenger it registers is itself. Burning sends the tokens to a dead address (the test
/// tokens have no burn); minting uses the token's open `mint`.
contract TestTokenMessengerV2 is IMessageHandlerV2 {
    /// Circle's getter name (an immutable there), so clients read it the same way.
    uint32 public constant messageBodyVersion = 1;
    /// Unfinalized messages attested below this threshold are refused, as Circle's
    /// TOKEN_MESSENGER_MIN_FINALITY_THRESHOLD.
    uint32 public constant MIN_FINALITY_THRESHOLD = 500;
    /// `minFee` is in 1/1000 basis points of the amount.
    uint256 public constant MIN_FEE_MULTIPLIER = 10_000_000;
    address public constant BURN_ADDRESS = 0x000000000000000000000000000000000000dEaD;

    TestMessageTransmitterV2 public immutable localMessageTransmitter;
    address public owner;
    /// Receives the fee of fast transfers, as the real messenger's `feeRecipient`.
    address public feeRecipient;
    /// Circle's messenger keeps its minter separately; here the messenger is its own minter
    /// until `removeLocalMinter`, after which burns and mints fail as on CCTP.
    address public localMinter;
    /// The least `maxFee` a burn may offer, in 1/1000 bp of the amount (V2.1's standard fee switch).
    uint256 public minFee;
    /// The messenger trusted on each remote domain; burns to a domain without one are refused.
    mapping(uint32 => bytes32) public remoteTokenMessengers;
    /// keccak256(abi.encodePacked(remoteDomain, remoteToken)) => local token, as TokenMinter's.
    mapping(bytes32 => address) public remoteTokensToLocalTokens;
    /// As TokenController's: the most one burn may take of a token; zero for a token that cannot be burned.
    mapping(address => uint256) public burnLimitsPerMessage;

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
    event SetBurnLimitPerMessage(address indexed token, uint256 burnLimitPerMessage);
    event RemoteTokenMessengerAdded(uint32 domain, bytes32 tokenMessenger);
    event RemoteTokenMessengerRemoved(uint32 domain, bytes32 tokenMessenger);
    event LocalMinterAdded(address localMinter);
    event LocalMinterRemoved(address localMinter);
    event MinFeeSet(uint256 minFee);

    constructor(address localMessageTransmitter_) {
        localMessageTransmitter = TestMessageTransmitterV2(localMessageTransmitter_);
        owner = msg.sender;
        feeRecipient = msg.sender;
        localMinter = address(this);
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "Caller is not the owner");
        _;
    }

    /// Burns of `remoteToken` on `remoteDomain` mint `localToken` here (it is not made burnable).
    function linkTokenPair(address localToken, uint32 remoteDomain, bytes32 remoteToken) external onlyOwner {
        bytes32 key = keccak256(abi.encodePacked(remoteDomain, remoteToken));
        require(remoteTokensToLocalTokens[key] == address(0), "Unable to link token pair");
        remoteTokensToLocalTokens[key] = localToken;
        emit TokenPairLinked(localToken, remoteDomain, remoteToken);
    }

    /// A non-zero limit makes `localToken` burnable, up to that amount per message.
    function setMaxBurnAmountPerMessage(address localToken, uint256 burnLimitPerMessage) external onlyOwner {
        burnLimitsPerMessage[localToken] = burnLimitPerMessage;
        emit SetBurnLimitPerMessage(localToken, burnLimitPerMessage);
    }

    function addRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger) external onlyOwner {
        require(tokenMessenger != bytes32(0), "bytes32(0) not allowed");
        require(remoteTokenMessengers[domain] == bytes32(0), "TokenMessenger already set");
        remoteTokenMessengers[domain] = tokenMessenger;
        emit RemoteTokenMessengerAdded(domain, tokenMessenger);
    }

    function removeRemoteTokenMessenger(uint32 domain) external onlyOwner {
        bytes32 removed = remoteTokenMessengers[domain];
        require(removed != bytes32(0), "No TokenMessenger set");
        delete remoteTokenMessengers[domain];
        emit RemoteTokenMessengerRemoved(domain, removed);
    }

    /// Circle's takes any TokenMinterV2; the stand-in burns and mints by itself, so only it can be its minter.
    function addLocalMinter(address newLocalMinter) external onlyOwner {
        require(newLocalMinter == address(this), "The stand-in is its own minter");
        require(localMinter == address(0), "Local minter is already set.");
        localMinter = newLocalMinter;
        emit LocalMinterAdded(newLocalMinter);
    }

    function removeLocalMinter() external onlyOwner {
        address removed = localMinter;
        require(removed != address(0), "No local minter is set.");
        delete localMinter;
        emit LocalMinterRemoved(removed);
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        require(feeRecipient_ != address(0), "Zero address not allowed");
        feeRecipient = feeRecipient_;
    }

    /// Circle gives this to a min fee controller; here the owner holds it.
    function setMinFee(uint256 minFee_) external onlyOwner {
        require(minFee_ < MIN_FEE_MULTIPLIER, "Min fee too high");
        minFee = minFee_;
        emit MinFeeSet(minFee_);
    }

    function getMinFeeAmount(uint256 amount) external view returns (uint256) {
        if (minFee == 0) return 0;
        require(amount > 1, "Amount too low");
        return _minFeeAmount(amount);
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
        _checkReceiveCaller(remoteDomain, sender);
        return _handleReceive(remoteDomain, messageBody);
    }

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool) {
        _checkReceiveCaller(remoteDomain, sender);
        require(finalityThresholdExecuted >= MIN_FINALITY_THRESHOLD, "Unsupported finality threshold");
        return _handleReceive(remoteDomain, messageBody);
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
        if (minFee > 0) require(maxFee >= _minFeeAmount(amount), "Insufficient max fee");
        bytes32 destinationMessenger = remoteTokenMessengers[destinationDomain];
        require(destinationMessenger != bytes32(0), "No TokenMessenger for domain");
        require(localMinter != address(0), "Local minter is not set");
        // As Circle's: the tokens move first, then the minter checks its limit and burns them.
        require(IMintableToken(burnToken).transferFrom(msg.sender, BURN_ADDRESS, amount), "Transfer operation failed");
        uint256 limit = burnLimitsPerMessage[burnToken];
        require(limit > 0, "Burn token not supported");
        require(amount <= limit, "Burn amount exceeds per tx limit");

        bytes memory body = abi.encodePacked(
            messageBodyVersion,
            bytes32(uint256(uint160(burnToken))),
            mintRecipient,
            amount,
            bytes32(uint256(uint160(msg.sender))),
            maxFee,
            uint256(0), // feeExecuted
            uint256(0), // expirationBlock
            hookData
        );
        localMessageTransmitter.sendMessage(destinationDomain, destinationMessenger, destinationCaller, minFinalityThreshold, body);
        emit DepositForBurn(
            burnToken, amount, msg.sender, mintRecipient, destinationDomain, destinationMessenger, destinationCaller,
            maxFee, minFinalityThreshold, hookData
        );
    }

    /// amount * minFee / MIN_FEE_MULTIPLIER, at least 1.
    function _minFeeAmount(uint256 amount) private view returns (uint256) {
        uint256 fee = (amount * minFee) / MIN_FEE_MULTIPLIER;
        return fee == 0 ? 1 : fee;
    }

    function _checkReceiveCaller(uint32 remoteDomain, bytes32 sender) private view {
        require(msg.sender == address(localMessageTransmitter), "Invalid message transmitter");
        require(
            sender != bytes32(0) && remoteTokenMessengers[remoteDomain] == sender, "Remote TokenMessenger unsupported"
        );
    }

    /// Validates the burn message as Circle's `_validatedReceivedMessage`, then mints
    /// amount - feeExecuted to the recipient and the fee to `feeRecipient`.
    function _handleReceive(uint32 remoteDomain, bytes calldata body) private returns (bool) {
        require(body.length >= 228, "Invalid burn message: too short");
        require(uint32(bytes4(body[0:4])) == messageBodyVersion, "Invalid message body version");
        uint256 expirationBlock = uint256(bytes32(body[196:228]));
        require(expirationBlock == 0 || expirationBlock > block.number, "Message expired and must be re-signed");
        uint256 amount = uint256(bytes32(body[68:100]));
        uint256 fee = uint256(bytes32(body[164:196]));
        require(fee == 0 || fee < amount, "Fee equals or exceeds amount");
        require(fee <= uint256(bytes32(body[132:164])), "Fee exceeds max fee");
        address recipient = address(uint160(uint256(bytes32(body[36:68]))));

        require(localMinter != address(0), "Local minter is not set");
        address token = remoteTokensToLocalTokens[keccak256(abi.encodePacked(remoteDomain, bytes32(body[4:36])))];
        require(token != address(0), "Mint token not supported");
        IMintableToken(token).mint(recipient, amount - fee);
        if (fee > 0) IMintableToken(token).mint(feeRecipient, fee);
        emit MintAndWithdraw(recipient, amount - fee, token, fee);
        return true;
    }
}
